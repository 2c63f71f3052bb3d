import CallAPI
import CallAPITesting
import Testing

/// Actions that cross in flight: each row of docs/crossing-actions.md. Signaling takes 50 ms one way, so
/// both actions happen before either message arrives.
@Suite("Crossing actions end both sides in the same state")
struct CrossingActionTests {
    private func ringing(timeout: UInt64 = 15_000) -> CallHarness {
        let h = CallHarness(latencyMillis: 50, prepare: PrepareConfig(callTimeoutMillisecond: timeout))
        h[1].api.call(remoteUserId: 2, completion: nil)
        h.clock.advance(byMillis: 50)
        return h
    }

    private func expectBothOut(_ h: CallHarness, _ one: CallStateReason, _ two: CallStateReason) {
        h.clock.advance(byMillis: 30_000)
        #expect(h[1].api.state == .prepared)
        #expect(h[2].api.state == .prepared)
        #expect(h[1].listener.lastState?.reason == one)
        #expect(h[2].listener.lastState?.reason == two)
        #expect(h[1].engine.isReleased && h[2].engine.isReleased)
        #expect(h.world.occupiedChannels.isEmpty)
    }

    @Test func cancelCrossingAcceptEndsBothCancelled() {
        let h = ringing()
        h[1].api.cancelCall(completion: nil)
        h[2].api.accept(remoteUserId: 1, completion: nil)
        #expect(h[2].api.state == .connecting || h[2].api.state == .connected)
        expectBothOut(h, .localCancelled, .remoteCancelled)
    }

    @Test func hangupWhileRingingCrossingAcceptActsAsCancel() {
        let h = ringing()
        h[1].api.hangup(remoteUserId: 2, reason: nil, completion: nil)
        h[2].api.accept(remoteUserId: 1, completion: nil)
        expectBothOut(h, .localCancelled, .remoteCancelled)
    }

    @Test func hangupInConnectingCrossingTheFirstFrameEndsBothHungUp() {
        let h = ringing()
        h[2].api.accept(remoteUserId: 1, completion: nil)
        h.clock.advance(byMillis: 50)
        #expect(h[1].api.state == .connected || h[1].api.state == .connecting)
        h[1].api.hangup(remoteUserId: 2, reason: nil, completion: nil)
        expectBothOut(h, .localHangup, .remoteHangup)
    }

    @Test func rejectCrossingCancelEndsBothWithTheirOwnAction() {
        let h = ringing()
        h[2].api.reject(remoteUserId: 1, reason: "no", completion: nil)
        h[1].api.cancelCall(completion: nil)
        expectBothOut(h, .localCancelled, .localRejected)
    }

    @Test func timeoutCrossingAcceptEndsBothTimedOut() {
        let h = ringing(timeout: 2_000)
        h.clock.advance(byMillis: 2_000 - 50 - 1)
        h[2].api.accept(remoteUserId: 1, completion: nil)  // 1 ms before the caller's timer fires
        h.clock.advance(byMillis: 1)
        #expect(h[1].listener.lastState?.reason == .callingTimeout)
        expectBothOut(h, .callingTimeout, .remoteCallingTimeout)
    }

    @Test func glareBothCallingEachOtherEndsInOneConnectedCall() {
        let h = CallHarness(latencyMillis: 50)
        h[1].api.call(remoteUserId: 2, completion: nil)
        h[2].api.call(remoteUserId: 1, completion: nil)
        h.clock.advance(byMillis: 5_000)
        #expect(h[1].api.state == .connected)
        #expect(h[2].api.state == .connected)
        #expect(h[1].api.getCallId() == h[2].api.getCallId())
        #expect(h[1].engine.channel == h[2].engine.channel)
        #expect(h.world.occupiedChannels.count == 1)
    }

    @Test func hangupCrossingHangupEndsBothLocalHangup() {
        let h = ringing()
        h[2].api.accept(remoteUserId: 1, completion: nil)
        h.clock.advance(byMillis: 1_000)
        #expect(h[1].api.state == .connected && h[2].api.state == .connected)
        h[1].api.hangup(remoteUserId: 2, reason: nil, completion: nil)
        h[2].api.hangup(remoteUserId: 1, reason: nil, completion: nil)
        expectBothOut(h, .localHangup, .localHangup)
        let disconnects = h[1].listener.records.filter { if case .disconnected = $0 { true } else { false } }
        #expect(disconnects.count == 1)
    }
}

@Suite("A call from the peer of a connected call")
struct PeerCallsAgainTests {
    private static func call(_ callId: String, from: UInt, to: UInt, now: Int64) -> String {
        CallMessage(
            action: .videoCall, timestamp: now, messageId: 77, fromUserId: from, callId: callId, remoteUserId: to,
            fromRoomId: "room-\(from)"
        ).encoded()
    }

    @Test func aCallThatLostAGlareToOurConnectedCallIsIgnored() {
        let h = CallHarness(prepare: PrepareConfig(), reliability: .off)
        h[1].api.call(remoteUserId: 2, completion: nil)
        h[2].api.accept(remoteUserId: 1, completion: nil)
        #expect(h[1].api.state == .connected)
        let ours = h[1].api.getCallId()
        h.network.inject(text: Self.call(ours + "-higher", from: 2, to: 1, now: h.clock.nowMillis()), from: 2, to: 1)
        #expect(h[1].api.state == .connected)
        #expect(h[1].api.getCallId() == ours)
    }

    @Test func aCallThatWouldWinAGlareMeansThePeerLeftOurCall() {
        let h = CallHarness(prepare: PrepareConfig(), reliability: .off)
        h[1].api.call(remoteUserId: 2, completion: nil)
        h[2].api.accept(remoteUserId: 1, completion: nil)
        #expect(h[1].api.state == .connected)
        h.network.inject(text: Self.call("0-lower", from: 2, to: 1, now: h.clock.nowMillis()), from: 2, to: 1)
        #expect(h[1].api.state == .calling)
        #expect(h[1].api.getCallId() == "0-lower")
        #expect(
            h[1].listener.states.suffix(2) == [.state(.prepared, .remoteHangup), .state(.calling, .remoteVideoCall)])
    }
}
