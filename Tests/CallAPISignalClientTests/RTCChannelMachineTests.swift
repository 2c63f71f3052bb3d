import CallAPISignalProtocol
import Testing

@testable import CallAPISignalClient

/// The RTC channel client's logic, driven directly.
@Suite struct RTCChannelMachineTests {
    var machine = RTCChannelMachine(
        url: "ws://a:1/v1/rtc?channel=room", channel: "room", uid: 1001, device: nil, token: "t")

    mutating func joined(members: [ChannelMember] = []) {
        _ = machine.handle(.start)
        _ = machine.handle(.socketOpened)
        _ = machine.handle(.received(.joined(.init(channel: "room", uid: 1001, devices: members, expiresAt: 1))))
    }

    @Test mutating func theJoinIsTheFirstFrameOnceTheSocketOpens() {
        #expect(machine.handle(.start) == [.openSocket(url: "ws://a:1/v1/rtc?channel=room")])
        #expect(machine.handle(.socketOpened) == [.write(.join(.init(channel: "room", uid: 1001, token: "t")))])
        #expect(machine.phase == .joining)
    }

    @Test mutating func aJoinSentElsewhereByAClusterJoinsAgainAtTheNodeNamedWithWhatWasQueued() {
        _ = machine.handle(.start)
        _ = machine.handle(.socketOpened)
        #expect(machine.handle(.send(data: "a", to: ChannelMember(uid: 1002))).isEmpty)
        let moved = ChannelServerFrame.Failure(
            code: .channelElsewhere, message: "channel room meets on node b", location: "ws://b:2")
        let outputs = machine.handle(.received(.joinFailed(moved)))
        #expect(
            outputs == [
                .log(.info, "channel room meets on node b: joining there"), .closeSocket,
                .openSocket(url: "ws://b:2/v1/rtc?channel=room"),
            ])
        #expect(machine.phase == .connecting)
        // The join again on the new socket; what was queued still waits for `joined`.
        #expect(machine.handle(.socketOpened) == [.write(.join(.init(channel: "room", uid: 1001, token: "t")))])
        let joined = machine.handle(.received(.joined(.init(channel: "room", uid: 1001, devices: [], expiresAt: 1))))
        #expect(joined == [.emit(.joined(members: [], iceServers: [])), .write(.signal(.init(to: 1002, data: "a")))])
    }

    @Test mutating func aJoinSentElsewhereTooOftenOrWithNoAddressFails() {
        _ = machine.handle(.start)
        for node in 1...RTCChannelMachine.maxRedirects {
            _ = machine.handle(.socketOpened)
            let moved = ChannelServerFrame.Failure(code: .channelElsewhere, message: "m", location: "ws://n\(node):2")
            #expect(
                machine.handle(.received(.joinFailed(moved))).contains(
                    .openSocket(url: "ws://n\(node):2/v1/rtc?channel=room")))
        }
        _ = machine.handle(.socketOpened)
        let again = ChannelServerFrame.Failure(code: .channelElsewhere, message: "m", location: "ws://n9:2")
        #expect(
            machine.handle(.received(.joinFailed(again))) == [.emit(.joinFailed(code: 18, message: "m")), .closeSocket])
        #expect(machine.phase == .ended)

        var unaddressed = RTCChannelMachine(url: "ws://a:1", channel: "room", uid: 1001, device: nil, token: "t")
        _ = unaddressed.handle(.start)
        _ = unaddressed.handle(.socketOpened)
        let moved = ChannelServerFrame.Failure(code: .channelElsewhere, message: "meets on node b")
        #expect(
            unaddressed.handle(.received(.joinFailed(moved)))
                == [.emit(.joinFailed(code: 18, message: "meets on node b")), .closeSocket])
    }

    @Test mutating func signalsAndRenewalsBeforeJoinedAreSentRightAfterIt() {
        _ = machine.handle(.start)
        #expect(machine.handle(.send(data: "a", to: ChannelMember(uid: 1002))).isEmpty)
        _ = machine.handle(.socketOpened)
        #expect(machine.handle(.renew(token: "t2")).isEmpty)
        #expect(machine.handle(.send(data: "b", to: ChannelMember(uid: 1002))).isEmpty)
        let outputs = machine.handle(
            .received(.joined(.init(channel: "room", uid: 1001, devices: [ChannelMember(uid: 1002)], expiresAt: 1))))
        #expect(
            outputs == [
                .emit(.joined(members: [ChannelMember(uid: 1002)], iceServers: [])),
                .write(.signal(.init(to: 1002, data: "a"))),
                .write(.renew(.init(token: "t2"))), .write(.signal(.init(to: 1002, data: "b"))),
            ])
        #expect(
            machine.handle(.send(data: "c", to: ChannelMember(uid: 1002))) == [
                .write(.signal(.init(to: 1002, data: "c")))
            ])
    }

    @Test mutating func serverEventsBecomeClientEvents() {
        joined()
        #expect(
            machine.handle(.received(.memberJoined(.init(uid: 1002)))) == [
                .emit(.memberJoined(ChannelMember(uid: 1002)))
            ])
        #expect(
            machine.handle(.received(.signal(.init(from: 1002, data: "x")))) == [
                .emit(.signal(from: ChannelMember(uid: 1002), data: "x"))
            ])
        #expect(machine.handle(.received(.tokenWillExpire(.init(expiresAt: 5)))) == [.emit(.tokenWillExpire)])
        #expect(
            machine.handle(.received(.memberLeft(.init(uid: 1002, reason: .dropped))))
                == [.emit(.memberLeft(ChannelMember(uid: 1002), reason: 1))])
    }

    @Test mutating func refusalsAndFailedSignalsAreLoggedNotDropped() {
        joined()
        let failed = machine.handle(.received(.signalFailed(.init(to: 9, message: "uid 9 is not in channel room"))))
        #expect(failed == [.log(.warning, "signal to 9 not relayed: uid 9 is not in channel room")])
        let error = machine.handle(.received(.error(.init(code: .malformed, message: "bad"))))
        #expect(error == [.log(.warning, "the server refused a frame (code 7): bad")])
    }

    @Test mutating func aRefusedJoinEndsEverything() {
        _ = machine.handle(.start)
        _ = machine.handle(.socketOpened)
        let outputs = machine.handle(.received(.joinFailed(.init(code: .barred, message: "wait"))))
        #expect(outputs == [.emit(.joinFailed(code: 5, message: "wait")), .closeSocket])
        #expect(machine.handle(.socketClosed(cause: "closed")).isEmpty)
    }

    @Test mutating func aConnectionLostBeforeJoiningFailsTheJoinAndAfterItRemoves() {
        _ = machine.handle(.start)
        guard case .emit(.joinFailed(100, _)) = machine.handle(.socketClosed(cause: "refused")).first else {
            Issue.record("no joinFailed")
            return
        }
        var member = RTCChannelMachine(
            url: "ws://a:1/v1/rtc?channel=room", channel: "room", uid: 1001, device: nil, token: "t")
        _ = member.handle(.start)
        _ = member.handle(.socketOpened)
        _ = member.handle(.received(.joined(.init(channel: "room", uid: 1001, devices: [], expiresAt: 1))))
        guard case .emit(.removed(100, _)) = member.handle(.socketClosed(cause: "reset")).first else {
            Issue.record("no removed")
            return
        }
    }

    @Test mutating func leavingSendsLeaveAndSilencesTheRest() {
        joined()
        #expect(machine.handle(.leave) == [.write(.leave), .closeSocket])
        #expect(machine.handle(.received(.signal(.init(from: 1002, data: "late")))).isEmpty)
        #expect(machine.handle(.socketClosed(cause: "closed")).isEmpty)
        guard case .log(.warning, _) = machine.handle(.send(data: "x", to: ChannelMember(uid: 1002))).first else {
            Issue.record("a send after leaving was not logged")
            return
        }
    }
}
