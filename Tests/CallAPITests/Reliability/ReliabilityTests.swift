import CallAPI
import CallAPITesting
import Testing

@Suite("Acknowledgements, retries and peer liveness")
struct ReliabilityTests {
    private func connected(latency: Int64 = 20) -> CallHarness {
        let h = CallHarness(latencyMillis: latency)
        h[1].api.call(remoteUserId: 2, completion: nil)
        h.clock.advance(byMillis: latency)
        h[2].api.accept(remoteUserId: 1, completion: nil)
        h.clock.advance(byMillis: 200)
        return h
    }

    /// Shortfall 3: the existing clients send a hangup once; if it is lost the peer stays in the call.
    @Test func aLostHangupIsRetriedUntilThePeerHasIt() {
        let h = connected()
        #expect(h[2].api.state == .connected)
        h.network.inject(.drop, count: 2, from: 1, to: 2)
        let probe = h[1].api.probe { $0.hangup(remoteUserId: 2, reason: nil, completion: $1) }
        #expect(probe.succeeded)  // the user's action completes at once
        #expect(h[1].api.state == .prepared)
        h.clock.advance(byMillis: 1_600)  // retries after 500 ms and 1 s more
        #expect(h[2].api.state == .prepared)
        #expect(h[2].listener.lastState?.reason == .remoteHangup)
    }

    @Test func anAcknowledgedMessageIsNotSentAgain() {
        let h = connected()
        h[1].api.hangup(remoteUserId: 2, reason: nil, completion: nil)
        h.clock.advance(byMillis: 30_000)
        let hangups = h.network.sentMessages.filter { $0.from == 1 && $0.text.contains("\"message_action\":4") }
        #expect(hangups.count == 1)
    }

    @Test func retriesStopAtTheBoundWhenNothingEverArrives() {
        let h = connected()
        h.network.partition(1, 2)
        h[1].api.hangup(remoteUserId: 2, reason: nil, completion: nil)
        h.clock.advance(byMillis: 60_000)
        let hangups = h.network.sentMessages.filter { $0.from == 1 && $0.text.contains("\"message_action\":4") }
        // 0, 0.5, 1.5, 3.5, 7.5, 11.5, 15.5, 19.5 s: doubling to 4 s, within the 20 s bound.
        #expect(hangups.count == 8)
    }

    @Test func aRepeatedMessageIsHandledOnceButAcknowledgedEachTime() {
        let h = CallHarness(latencyMillis: 20)
        h.network.inject(.duplicate, from: 1, to: 2)
        h[1].api.call(remoteUserId: 2, completion: nil)
        h.clock.advance(byMillis: 100)
        let rings = h[2].listener.states.filter { $0 == .state(.calling, .remoteVideoCall) }
        #expect(rings.count == 1)
        let acks = h.network.sentMessages.filter { $0.from == 2 && $0.text.contains("\"ackMessageId\":1") }
        #expect(acks.count == 2)
    }

    /// Shortfall 7: a peer that vanishes is only reported as an RTC "remote left"; the call never ends.
    @Test func aPeerThatVanishesEndsTheCallWithPeerLost() {
        let h = connected()
        h.network.setOnline(false, userId: 2)
        h[2].api.removeListener(listener: h[2].listener)
        h.network.partition(1, 2)  // its process is gone: nothing more from it
        h.clock.advance(byMillis: 14_000)
        #expect(h[1].api.state == .connected)
        h.clock.advance(byMillis: 4_000)
        #expect(h[1].api.state == .prepared)
        #expect(h[1].listener.lastState?.reason == .peerLost)
        #expect(h[1].listener.events.contains(.peerLost))
        #expect(h[1].engine.isReleased)
    }

    @Test func theRTCRemoteLeftHintEndsTheCallFasterThanSilence() {
        let h = connected()
        h.network.partition(1, 2)
        h[2].engine.crash()
        h.clock.advance(byMillis: CallReliability.standard.remoteLeftGraceMillis)
        #expect(h[1].api.state == .prepared)
        #expect(h[1].listener.lastState?.reason == .peerLost)
    }

    @Test func aPeerThatComesBackToTheChannelWithinTheGraceKeepsTheCall() {
        let h = connected()
        let engine = h[2].engine
        let media = engine.media!
        let channel = engine.channel!
        engine.leaveChannel()
        h.clock.advance(byMillis: 1_000)
        engine.joinChannel(channel, token: "t", uid: 2, media: media)
        h.clock.advance(byMillis: 10_000)
        #expect(h[1].api.state == .connected)
    }

    @Test func aPeerThatSaysItIsInNoCallEndsOurCallAtTheNextKeepAlive() {
        let h = connected()
        // The peer's side ended and every copy of its hangup is lost; its acks still get through.
        h.network.setFaultPolicy { $0.from == 2 && $0.text.contains("\"message_action\":4") ? .drop : nil }
        h[2].api.hangup(remoteUserId: 1, reason: nil, completion: nil)
        h.clock.advance(byMillis: 3_100)  // at most one keep-alive interval
        #expect(h[1].api.state == .prepared)
        #expect(h[1].listener.lastState?.reason == .peerLost)
        #expect(h[1].listener.reason(of: .peerLost)?.contains("no longer in call") == true)
    }

    @Test func aCallMessageHeldByTheChannelPastTheRingTimeoutDoesNotRing() {
        let h = CallHarness()
        let old = h.clock.nowMillis() - 60_000
        let call = CallMessage(
            action: .videoCall, timestamp: h.clock.nowMillis(), messageId: 1, fromUserId: 1, callId: "late",
            remoteUserId: 2, fromRoomId: "room-1")
        // The sender's clock says "now", but the channel received it a minute ago (held while offline).
        h.network.inject(text: call.encoded(), from: 1, to: 2, receivedAtMillis: old)
        #expect(h[2].api.state == .prepared)
    }

    @Test func reliabilityOffSendsExactlyTheOneDotZeroMessages() {
        let h = CallHarness(latencyMillis: 20, reliability: .off)
        h[1].api.call(remoteUserId: 2, completion: nil)
        h.clock.advance(byMillis: 20)
        h[2].api.accept(remoteUserId: 1, completion: nil)
        h.clock.advance(byMillis: 10_000)
        let texts = h.network.sentMessages.map(\.text)
        #expect(texts.count == 2)
        #expect(texts.allSatisfy { !$0.contains("reliability") })
    }
}
