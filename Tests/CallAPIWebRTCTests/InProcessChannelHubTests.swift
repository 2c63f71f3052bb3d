import CallAPI
import CallAPISignalProtocol
import Foundation
import Testing

@testable import CallAPIWebRTC

/// The in-process hub treats a user's devices as our server's RTC channels do: separate members, signals to a named
/// device, and no signal without a device to a user on several.
@Suite struct InProcessChannelHubTests {
    /// What one membership hears.
    final class Heard: Sendable {
        let events = Locked<[WebRTCChannelEvent]>([])
        var callback: @Sendable (WebRTCChannelEvent) -> Void {
            { [self] event in events.withLock { $0.append(event) } }
        }
        /// The events once `count` have arrived (deliveries hop through the membership's serial queue).
        func first(_ count: Int) async -> [WebRTCChannelEvent] {
            _ = await eventually { events.withLock { $0.count >= count } }
            return events.withLock { $0 }
        }
    }

    @Test func aUsersDevicesAreSeparateMembersAndSignalsNameTheDevice() async {
        let hub = InProcessChannelHub()
        let (caller, phone, tablet) = (Heard(), Heard(), Heard())
        let callerMembership = hub.join(channel: "room", token: "t", uid: 1001, device: nil, events: caller.callback)
        let phoneMembership = hub.join(channel: "room", token: "t", uid: 1002, device: "p", events: phone.callback)
        _ = hub.join(channel: "room", token: "t", uid: 1002, device: "t", events: tablet.callback)
        let (phoneMember, tabletMember) = (ChannelMember(uid: 1002, device: "p"), ChannelMember(uid: 1002, device: "t"))
        callerMembership.send(.restart(generation: 2), to: tabletMember)
        callerMembership.send(.restart(generation: 3), to: ChannelMember(uid: 1002))
        phoneMembership.send(.restart(generation: 4), to: ChannelMember(uid: 1001))
        // A last signal to each device: one that reached it, in order, comes before it.
        callerMembership.send(.restart(generation: 5), to: tabletMember)
        callerMembership.send(.restart(generation: 5), to: phoneMember)
        #expect(
            await caller.first(4) == [
                .joined(members: [], iceServers: []), .memberJoined(phoneMember), .memberJoined(tabletMember),
                .signal(from: phoneMember, .restart(generation: 4)),
            ])
        #expect(
            await tablet.first(3) == [
                .joined(members: [ChannelMember(uid: 1001), phoneMember], iceServers: []),
                .signal(from: ChannelMember(uid: 1001), .restart(generation: 2)),
                .signal(from: ChannelMember(uid: 1001), .restart(generation: 5)),
            ], "the signal without a device to a user on two reached neither")
        #expect(
            await phone.first(3) == [
                .joined(members: [ChannelMember(uid: 1001)], iceServers: []), .memberJoined(tabletMember),
                .signal(from: ChannelMember(uid: 1001), .restart(generation: 5)),
            ])
        #expect(hub.members(of: "room") == [1001, 1002])
    }
}
