import CallAPI
import CallAPISignalProtocol
import CallAPITesting
import Foundation
import Testing

@testable import CallAPIWebRTC

// A user on two devices, with real media through a real server: the call rings on both, both join the caller's
// room with join-on-ring (neither knocks the other out), the caller's engine links to each, and only the device
// that answers stays. Part of the serialized engine suite.
extension WebRTCEngineTests {
    /// When media from `member` last reached `engine`, if it has a link to it.
    private func lastArrival(at engine: WebRTCEngine, from member: ChannelMember) -> UInt64? {
        engine.state.withLock { $0.session?.peers[member]?.link?.arrivals.last }
    }

    /// The members of `engine`'s call channel that it has links to.
    private func linkedPeers(of engine: WebRTCEngine) -> Set<ChannelMember> {
        engine.state.withLock { Set($0.session?.peers.keys.map { $0 } ?? []) }
    }

    /// Waits until the server's channel `room` holds exactly `members` (in any order: the caller's join may come
    /// after the callee's devices').
    private func roomHolds(_ members: Set<ChannelMember>, _ room: String, on server: MediaServer) async throws {
        do {
            try await within(20, "room \(room) holding \(members)") {
                while Set(await server.server.channelDevices(room)) != members {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
        } catch {
            Issue.record("room \(room) holds \(await server.server.channelDevices(room)), not \(members)")
            throw error
        }
    }

    @Test func aCallRingingOnTwoDevicesKeepsBothInTheRoomAndOnlyTheOneThatAnswersStays() async throws {
        let server = try await MediaServer.start()
        let phone = ChannelMember(uid: 1002, device: "phone-1")
        let tablet = ChannelMember(uid: 1002, device: "tablet-1")
        let caller = try await serverEndpoint(1001, on: server)
        let onPhone = try await serverEndpoint(1002, on: server, device: "phone-1")
        let onTablet = try await serverEndpoint(1002, on: server, device: "tablet-1")
        let (callerStates, phoneStates, tabletStates) = (caller.states, onPhone.states, onTablet.states)

        try await caller.api.call(remoteUserId: 1002, callType: .video)
        for (states, name) in [(phoneStates, "phone"), (tabletStates, "tablet")] {
            try await within(20, "the \(name) ringing") {
                for await change in states where change.state == .calling { return }
            }
        }
        // Join-on-ring on both devices: three members, nobody replaced.
        let room = "1001-\(caller.api.getCallId())"
        let caller1001 = ChannelMember(uid: 1001)
        try await roomHolds([caller1001, phone, tablet], room, on: server)
        // The caller's engine links to each device, and real media arrives from both while they ring.
        #expect(await eventually { linkedPeers(of: caller.engine) == [phone, tablet] })
        #expect(
            await eventually {
                lastArrival(at: caller.engine, from: phone) != nil
                    && lastArrival(at: caller.engine, from: tablet) != nil
            }, "media from both ringing devices")
        #expect(onPhone.api.state == .calling && onTablet.api.state == .calling)
        // The caller's user saw its peer join once, not once per device.
        #expect(caller.listener.events.filter { $0 == .remoteJoined }.count == 1)

        try await onPhone.api.accept(remoteUserId: 1001)
        let phoneConnected = try await within(20, "the phone connected") {
            for await change in phoneStates where change.state == .connected { return change }
            throw TimedOut(what: "phone states ended")
        }
        let callerConnected = try await within(20, "the caller connected") {
            for await change in callerStates where change.state == .connected { return change }
            throw TimedOut(what: "caller states ended")
        }
        // The caller decoded frames while ringing, so it connects on the accept itself; the phone on the accept or
        // on its first frame of the caller, whichever is last.
        #expect(callerConnected.reason == .remoteAccepted)
        #expect([.localAccepted, .recvRemoteFirstFrame].contains(phoneConnected.reason))
        let tabletEnded = try await within(20, "the tablet stopping") {
            for await change in tabletStates where change.state == .prepared { return change }
            throw TimedOut(what: "tablet states ended")
        }
        #expect(tabletEnded.reason == .answeredElsewhere)

        // The tablet left the room; the phone stays, and the caller's engine keeps its link and its media.
        try await roomHolds([caller1001, phone], room, on: server)
        #expect(await eventually { linkedPeers(of: caller.engine) == [phone] })
        let before = try #require(lastArrival(at: caller.engine, from: phone))
        #expect(
            await eventually { (lastArrival(at: caller.engine, from: phone) ?? 0) > before },
            "media from the phone after the tablet left")
        #expect(caller.api.state == .connected && onPhone.api.state == .connected)
        #expect(!caller.listener.events.contains(.remoteLeft), "the peer's user never left")

        try await caller.api.hangup(remoteUserId: 1002)
        try await roomHolds([], room, on: server)
        await caller.close()
        await onPhone.close()
        await onTablet.close()
        try await server.stop()
    }
}
