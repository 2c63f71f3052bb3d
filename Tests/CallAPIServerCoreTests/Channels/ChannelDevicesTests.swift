import CallAPIServerCore
import CallAPISignalProtocol
import Testing

/// A user on several devices in one RTC channel: each device is a member of its own, signals name the device, and
/// limits, kicks and the watchdog count users.
@Suite struct ChannelDevicesTests {
    let base = ChannelStateTests()
    var t0: Int64 { base.t0 }
    let phone = ChannelMember(uid: 1002, device: "phone-1")
    let tablet = ChannelMember(uid: 1002, device: "tablet-1")

    /// The caller (1001, no device), then the callee's phone (2) and tablet (3).
    func ringingOnTwoDevices(_ configure: (inout ChannelLimits) -> Void = { _ in }) -> ChannelState {
        var state = base.makeState(configure)
        base.join(&state, 1, uid: 1001)
        base.join(&state, 2, uid: 1002, device: "phone-1")
        base.join(&state, 3, uid: 1002, device: "tablet-1")
        return state
    }

    @Test func aUsersSecondDeviceJoinsBesideTheFirstInsteadOfReplacingIt() {
        var state = base.makeState()
        base.join(&state, 1, uid: 1001)
        base.join(&state, 2, uid: 1002, device: "phone-1")
        let tabletJoin = base.join(&state, 3, uid: 1002, device: "tablet-1")
        #expect(
            tabletJoin.contains(
                .send(
                    SessionID(3),
                    .joined(
                        .init(
                            channel: "room", uid: 1002, devices: [ChannelMember(uid: 1001), phone],
                            expiresAt: t0 + base.hour)))))
        #expect(tabletJoin.contains(.send(SessionID(1), .memberJoined(tablet))))
        #expect(tabletJoin.contains(.send(SessionID(2), .memberJoined(tablet))))
        #expect(!tabletJoin.contains { if case .send(_, .removed) = $0 { true } else { false } })
        #expect(
            tabletJoin.contains(
                .report(
                    .init(event: .userJoined, channel: "room", uid: 1002, device: "tablet-1", reason: .joined, time: t0)
                )))
        #expect(state.members(of: "room") == [1001, 1002])
        #expect(state.devices(of: "room") == [ChannelMember(uid: 1001), phone, tablet])
        #expect(state.memberCount == 3)
    }

    @Test func signalsReachTheNamedDeviceStampedWithTheSendersDevice() {
        var state = ringingOnTwoDevices()
        let toTablet = state.handle(.frame(SessionID(1), .signal(.init(to: tablet, data: "offer"))), now: t0)
        #expect(toTablet == [.send(SessionID(3), .signal(.init(from: 1001, data: "offer")))])
        let fromPhone = state.handle(.frame(SessionID(2), .signal(.init(to: 1001, data: "answer"))), now: t0)
        #expect(fromPhone == [.send(SessionID(1), .signal(.init(from: 1002, device: "phone-1", data: "answer")))])
    }

    @Test func aSignalWithoutADeviceToAUserOnSeveralIsRefusedNamingThem() {
        var state = ringingOnTwoDevices()
        let ambiguous = state.handle(.frame(SessionID(1), .signal(.init(to: 1002, data: "offer"))), now: t0)
        #expect(
            ambiguous == [
                .send(
                    SessionID(1),
                    .signalFailed(
                        .init(
                            to: 1002,
                            message:
                                "uid 1002 is in channel room on 2 devices (phone-1, tablet-1); name one in \"device\""
                        )))
            ])
        let absent = state.handle(
            .frame(SessionID(1), .signal(.init(to: 1002, device: "watch-1", data: "x"))), now: t0)
        #expect(
            absent == [
                .send(
                    SessionID(1),
                    .signalFailed(
                        .init(to: 1002, device: "watch-1", message: "uid 1002 is not in channel room on device watch-1")
                    ))
            ])
        let ownUid = state.handle(.frame(SessionID(2), .signal(.init(to: tablet, data: "x"))), now: t0)
        #expect(
            ownUid == [
                .send(
                    SessionID(2),
                    .signalFailed(.init(to: 1002, device: "tablet-1", message: "a member cannot signal its own uid")))
            ])
    }

    @Test func theSameDeviceJoiningAgainReplacesOnlyItself() {
        var state = ringingOnTwoDevices()
        let again = base.join(&state, 4, uid: 1002, device: "tablet-1")
        #expect(
            again.contains(
                .send(
                    SessionID(3),
                    .removed(.init(code: .replaced, message: "uid 1002/tablet-1 joined channel room again elsewhere")))
            ))
        #expect(
            again.contains(.send(SessionID(1), .memberLeft(.init(uid: 1002, device: "tablet-1", reason: .removed)))))
        #expect(!again.contains(.close(SessionID(2), code: ChannelErrorCode.replaced.closeCode)))
        #expect(state.devices(of: "room") == [ChannelMember(uid: 1001), phone, tablet])
        #expect(state.member(SessionID(4))?.member == tablet && state.member(SessionID(3)) == nil)
    }

    @Test func capacityCountsUsersAndEachUserHasADeviceLimit() {
        var state = ringingOnTwoDevices { $0.devicesPerUser = 2 }
        #expect(
            base.joinFailure(base.join(&state, 4, uid: 1003)) == .channelFull,
            "a third user, with capacity 2")
        let third = base.join(&state, 5, uid: 1002, device: "watch-1")
        #expect(base.joinFailure(third) == .channelFull)
        #expect(
            third.contains(
                .send(
                    SessionID(5),
                    .joinFailed(
                        .init(
                            code: .channelFull,
                            message: "uid 1002 is already in channel room on 2 devices, the most this server allows")
                    ))))
        #expect(state.memberCount == 3)
    }

    @Test func aDeviceThatLeavesIsNamedToTheOthersAndTheReport() {
        var state = ringingOnTwoDevices()
        let left = state.handle(.frame(SessionID(3), .leave), now: t0)
        let frame = ChannelServerFrame.memberLeft(.init(uid: 1002, device: "tablet-1", reason: .quit))
        #expect(left.contains(.send(SessionID(1), frame)))
        #expect(left.contains(.send(SessionID(2), frame)))
        #expect(
            left.contains(
                .report(
                    .init(event: .userLeft, channel: "room", uid: 1002, device: "tablet-1", reason: .quit, time: t0))))
        #expect(state.devices(of: "room") == [ChannelMember(uid: 1001), phone])
        let toUid = state.handle(.frame(SessionID(1), .signal(.init(to: 1002, data: "x"))), now: t0)
        #expect(
            toUid == [.send(SessionID(2), .signal(.init(from: 1001, data: "x")))],
            "one device left: a signal without a device reaches it")
    }

    @Test func aKickRemovesEveryDeviceOfTheUser() {
        var state = ringingOnTwoDevices()
        var actions: [ChannelAction] = []
        let answer = state.kick(channel: "room", uid: 1002, barSeconds: 0, reason: nil, now: t0, into: &actions)
        #expect(answer.kicked)
        #expect(actions.contains(.close(SessionID(2), code: ChannelErrorCode.kicked.closeCode)))
        #expect(actions.contains(.close(SessionID(3), code: ChannelErrorCode.kicked.closeCode)))
        #expect(state.members(of: "room") == [1001])
    }

    @Test func theWatchdogCountsUsersNotDevices() {
        let watchdog: Int64 = 30_000
        // One user on two devices never had a peer: no watchdog.
        var alone = base.makeState { $0.watchdogMillis = watchdog }
        base.join(&alone, 2, uid: 1002, device: "phone-1")
        base.join(&alone, 3, uid: 1002, device: "tablet-1")
        #expect(alone.handle(.tick, now: t0 + watchdog + 1).isEmpty)
        // After a call, the user left alone is removed from every device.
        var state = ringingOnTwoDevices { $0.watchdogMillis = watchdog }
        _ = state.handle(.frame(SessionID(1), .leave), now: t0)
        let fired = state.handle(.tick, now: t0 + watchdog)
        #expect(fired.contains(.close(SessionID(2), code: ChannelErrorCode.watchdog.closeCode)))
        #expect(fired.contains(.close(SessionID(3), code: ChannelErrorCode.watchdog.closeCode)))
        #expect(state.channelCount == 0)
    }

    @Test func aBadDeviceIsRefusedAtJoin() {
        var state = base.makeState()
        _ = state.handle(.connected(SessionID(1)), now: t0)
        let actions = state.handle(
            .frame(SessionID(1), .join(.init(channel: "room", uid: 1001, token: "t", device: "my phone"))), now: t0)
        #expect(
            actions.first
                == .send(
                    SessionID(1),
                    .joinFailed(
                        .init(
                            code: .malformed,
                            message: "\"device\" must be 1-\(PushDevice.maxDeviceIdLength) characters of "
                                + "A-Z a-z 0-9 . _ - :"))))
    }
}
