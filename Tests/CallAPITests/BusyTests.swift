import CallAPITesting
import Testing

@testable import CallAPI

/// A third user calling someone who is in a call gets the busy reject; the call goes on.
@Suite("Busy with a third user")
struct BusyTests {
    static func expectBusyReply(_ h: CallHarness, from busy: UInt, to caller: UInt) throws {
        let reply = try #require(h.messages(from: busy, to: caller).last)
        #expect(reply.action == .reject)
        #expect(reply.rejectByInternal)
        #expect(reply.rejectReason == "The user is currently busy")
        let sent = h.network.sentMessages.last {
            $0.from == busy && $0.to == caller && jsonObject($0.text)?["message_action"] as? Int == 3
        }
        let text = try #require(sent?.text)
        let raw = try #require(jsonObject(text))
        #expect(raw["rejectReason"] as? String == "The user is currently busy")
        #expect(raw["rejectByInternal"] as? Int == 1)
        #expect(
            h[caller].listener.stateReasons == [.init(.calling, .localVideoCall), .init(.prepared, .remoteCallBusy)])
        #expect(h[caller].listener.events.contains(.remoteCallBusy))
        #expect(h[caller].listener.lastState?.eventReason == "The user is currently busy")
        #expect(h[caller].listener.lastState?.eventInfo.int(kRejectByInternal) == 1)
        #expect(h[caller].engine.isReleased)
    }

    @Test("User 3 calls user 2 who is ringing with user 1: busy for 3; 1 and 2 still ringing and can connect")
    func busyWhileRinging() throws {
        let h = CallHarness(users: [1, 2, 3])
        h.reach(.callingAsCaller)
        let callId = h[2].api.getCallId()
        #expect(h[3].api.probe { $0.call(remoteUserId: 2, completion: $1) }.succeeded)
        try Self.expectBusyReply(h, from: 2, to: 3)
        #expect(h[2].listener.stateRecords.isEmpty, "the busy user's state does not change")
        #expect(h[2].listener.events.isEmpty, "and it is not told anything but a log")
        #expect(h[2].api.getCallId() == callId)
        #expect(h[2].engine.channel == "room-1")
        #expect(h[1].listener.stateRecords.isEmpty)
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(h[1].api.state == .connected && h[2].api.state == .connected)
    }

    @Test("User 3 calls user 2 who is connected with user 1: busy for 3; the call goes on", arguments: [UInt(1), 2])
    func busyWhileConnected(target: UInt) throws {
        let h = CallHarness(users: [1, 2, 3])
        h.reach(.connected)
        #expect(h[3].api.probe { $0.call(remoteUserId: target, completion: $1) }.succeeded)
        try Self.expectBusyReply(h, from: target, to: 3)
        #expect(h[1].api.state == .connected && h[2].api.state == .connected)
        #expect(h[1].listener.stateRecords.isEmpty && h[2].listener.stateRecords.isEmpty)
        #expect(h.world.members(of: "room-1") == [1, 2])
        #expect(h[target].engine.playbackVolume(of: target == 1 ? 2 : 1) == 100)
    }

    @Test("User 3 calls user 1 who is itself calling user 2: busy")
    func busyWhileCalling() throws {
        let h = CallHarness(users: [1, 2, 3])
        h.reach(.callingAsCaller)
        _ = h[3].api.probe { $0.call(remoteUserId: 1, completion: $1) }
        try Self.expectBusyReply(h, from: 1, to: 3)
        #expect(h[1].api.state == .calling)
    }

    @Test("User 3 calls user 2 who is connecting: busy")
    func busyWhileConnecting() throws {
        let h = CallHarness(users: [1, 2, 3], timing: .init(firstFrameLatencyMillis: 1_000))
        h.reach(.connecting)
        _ = h[3].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        try Self.expectBusyReply(h, from: 2, to: 3)
        #expect(h[2].api.state == .connecting)
        h.clock.advance(byMillis: 1_000)
        #expect(h[1].api.state == .connected && h[2].api.state == .connected)
    }
}
