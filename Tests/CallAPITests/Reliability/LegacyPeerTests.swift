import CallAPI
import CallAPITesting
import Testing

/// Our endpoint against clients that speak only wire format 1.0 (no acks, no keep-alives), both flavours.
@Suite("Interoperating with a wire-format-1.0 peer")
struct LegacyPeerTests {
    @Test(arguments: LegacyFlavour.allCases)
    func weCallItAcceptsAndWeHangUp(_ flavour: LegacyFlavour) {
        let w = LegacyWorld(flavour)
        w.ours.call(remoteUserId: 9, completion: nil)
        w.clock.advance(byMillis: 600)
        #expect(w.legacy.state.type == .calling)
        w.legacy.accept()
        w.clock.advance(byMillis: 500)
        #expect(w.ours.state == .connected)
        w.ours.hangup(remoteUserId: 9, reason: nil, completion: nil)
        w.clock.advance(byMillis: 100)
        #expect(w.legacy.state == .prepared)
        #expect(w.listener.lastState?.reason == .localHangup)
        #expect(w.legacyWasSpokenToInItsOwnTerms)
    }

    @Test(arguments: LegacyFlavour.allCases)
    func itRejectsOurCall(_ flavour: LegacyFlavour) {
        let w = LegacyWorld(flavour)
        w.ours.call(remoteUserId: 9, completion: nil)
        w.clock.advance(byMillis: 100)
        w.legacy.reject()
        w.clock.advance(byMillis: 100)
        #expect(w.ours.state == .prepared)
        #expect(w.listener.lastState?.reason == .remoteRejected)
        #expect(w.legacyWasSpokenToInItsOwnTerms)
    }

    @Test(arguments: LegacyFlavour.allCases)
    func weCancelOurCall(_ flavour: LegacyFlavour) {
        let w = LegacyWorld(flavour)
        w.ours.call(remoteUserId: 9, completion: nil)
        w.clock.advance(byMillis: 100)
        w.ours.cancelCall(completion: nil)
        w.clock.advance(byMillis: 100)
        #expect(w.legacy.state == .prepared)
        #expect(w.listener.lastState?.reason == .localCancelled)
    }

    @Test(arguments: LegacyFlavour.allCases)
    func itCallsUsWeAcceptAndItHangsUp(_ flavour: LegacyFlavour) {
        let w = LegacyWorld(flavour)
        w.legacy.call(1)
        w.clock.advance(byMillis: 100)
        #expect(w.ours.state == .calling)
        w.ours.accept(remoteUserId: 9, completion: nil)
        w.clock.advance(byMillis: 500)
        #expect(w.ours.state == .connected)
        #expect(w.legacy.state.type == .connected)
        w.legacy.hangup()
        w.clock.advance(byMillis: 100)
        #expect(w.ours.state == .prepared)
        #expect(w.listener.lastState?.reason == .remoteHangup)
        #expect(w.legacyWasSpokenToInItsOwnTerms)
    }

    @Test(arguments: LegacyFlavour.allCases)
    func itsLostHangupIsCleanedUpWhenItLeavesTheChannel(_ flavour: LegacyFlavour) {
        let w = LegacyWorld(flavour)
        w.legacy.call(1)
        w.clock.advance(byMillis: 100)
        w.ours.accept(remoteUserId: 9, completion: nil)
        w.clock.advance(byMillis: 500)
        #expect(w.ours.state == .connected)
        w.network.inject(.drop, from: 9, to: 1)
        w.legacy.hangup()
        w.clock.advance(byMillis: 1_000)
        #expect(w.ours.state == .connected)  // nothing arrived yet; only the RTC channel says it left
        w.clock.advance(byMillis: CallReliability.standard.remoteLeftGraceMillis)
        #expect(w.ours.state == .prepared)
        #expect(w.listener.lastState?.reason == .peerLost)
        #expect(w.world.engine(userId: 1).isReleased)
    }

    @Test(arguments: LegacyFlavour.allCases)
    func itsLostHangupStillEndsOurCallWhenItRejoinsTheSameRoomForItsNextCall(_ flavour: LegacyFlavour) {
        // Chaos seeds 35729 and 96033 (--devices 3 --legacy 2): the existing clients keep one room for every
        // call, so the peer is back in our channel (for its call with user 3) before the grace is over.
        let w = LegacyWorld(flavour)
        w.legacy.call(1)
        w.clock.advance(byMillis: 100)
        w.ours.accept(remoteUserId: 9, completion: nil)
        w.clock.advance(byMillis: 500)
        #expect(w.ours.state == .connected)
        w.network.inject(.drop, from: 9, to: 1)
        w.legacy.hangup()
        w.clock.advance(byMillis: 200)
        w.legacy.call(3)
        w.clock.advance(byMillis: 500)
        #expect(w.third.state == .calling, "the peer's next call rings, from the same room")
        #expect(w.ours.state == .connected)
        w.clock.advance(byMillis: CallReliability.standard.remoteLeftGraceMillis)
        #expect(w.ours.state == .prepared, "it quit the channel: joining it again is another call")
        #expect(w.listener.lastState?.reason == .peerLost)
        #expect(w.third.state == .calling, "the peer's next call is untouched")
    }

    @Test(arguments: LegacyFlavour.allCases)
    func itsLostAcceptIsCleanedUpByTheRingTimer(_ flavour: LegacyFlavour) {
        let w = LegacyWorld(flavour)
        w.ours.call(remoteUserId: 9, completion: nil)
        w.clock.advance(byMillis: 100)
        w.network.inject(.drop, from: 9, to: 1)
        w.legacy.accept()
        w.clock.advance(byMillis: 10_000)
        #expect(w.ours.state == .prepared)
        #expect(w.listener.lastState?.reason == .callingTimeout)
        // Our timeout cancel reaches it and ends its side too.
        #expect(w.legacy.state == .prepared)
        #expect(w.legacyWasSpokenToInItsOwnTerms)
    }

    /// A call message lost on its way to a peer not known to acknowledge is not sent again: a repeat would
    /// ring the deployed clients again. The ring timer ends it.
    @Test(arguments: LegacyFlavour.allCases)
    func aLostCallToAPeerNotKnownToAcknowledgeIsNotRetried(_ flavour: LegacyFlavour) {
        let w = LegacyWorld(flavour)
        w.network.inject(.drop, from: 1, to: 9)
        w.ours.call(remoteUserId: 9, completion: nil)
        w.clock.advance(byMillis: 10_500)
        #expect(w.network.sentMessages.filter { $0.from == 1 && $0.to == 9 }.count == 2)  // the call, the cancel
        #expect(w.listener.lastState?.reason == .callingTimeout)
        #expect(w.repeatsSentToLegacy.isEmpty)
    }
}

extension LegacyPeerTests {
    /// A call from a 1.0 peer rings as usual, and accepting it connects only once the first remote frame is in.
    @Test(arguments: LegacyFlavour.allCases)
    func itsCallRingsAndConnectsOnTheFirstFrame(_ flavour: LegacyFlavour) {
        let w = LegacyWorld(flavour, firstFrameLatencyMillis: 2_000)
        w.legacy.call(1)
        w.clock.advance(byMillis: 100)
        #expect(
            w.listener.lastState.map { StateReason($0.state, $0.reason) } == StateReason(.calling, .remoteVideoCall))
        w.ours.accept(remoteUserId: 9, completion: nil)
        w.clock.advance(byMillis: 100)
        #expect(w.ours.state == .connecting)
        w.clock.advance(byMillis: 2_000)
        #expect(w.ours.state == .connected)
        #expect(w.listener.lastState?.reason == .recvRemoteFirstFrame)
        #expect(w.legacy.state.type == .connected)
        #expect(w.legacyWasSpokenToInItsOwnTerms)
    }
}
