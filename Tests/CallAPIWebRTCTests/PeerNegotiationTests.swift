import Testing

@testable import CallAPIWebRTC

@Suite("Offer/answer state machine")
struct PeerNegotiationTests {
    @Test func lowerUidOffers() {
        #expect(PeerNegotiation.Role(localUid: 1, remoteUid: 2) == .offerer)
        #expect(PeerNegotiation.Role(localUid: 2, remoteUid: 1) == .answerer)
    }

    @Test func offererSendsOfferThenAppliesAnswer() {
        var n = PeerNegotiation(localUid: 1, remoteUid: 2)
        #expect(n.start() == [.createOffer])
        #expect(n.localDescriptionCreated("o") == [.applyLocal(.offer, sdp: "o"), .send(.offer(sdp: "o"))])
        #expect(n.received(.iceCandidate(mline: 0, candidate: "c1")) == [])
        #expect(n.received(.answer(sdp: "a")) == [.applyRemote(.answer, sdp: "a")])
        #expect(n.remoteDescriptionApplied() == [.addRemoteCandidate(mline: 0, candidate: "c1")])
        #expect(
            n.received(.iceCandidate(mline: 0, candidate: "c2")) == [.addRemoteCandidate(mline: 0, candidate: "c2")])
        #expect(n.phase == .stable)
    }

    @Test func answererAnswersAfterApplyingOffer() {
        var n = PeerNegotiation(localUid: 2, remoteUid: 1)
        #expect(n.start() == [])
        #expect(n.received(.answer(sdp: "x")) == [])
        #expect(n.received(.offer(sdp: "o")) == [.applyRemote(.offer, sdp: "o")])
        #expect(n.localDescriptionCreated("early") == [])
        #expect(n.remoteDescriptionApplied() == [.createAnswer])
        #expect(n.localDescriptionCreated("a") == [.applyLocal(.answer, sdp: "a"), .send(.answer(sdp: "a"))])
        #expect(n.received(.offer(sdp: "again")) == [])
    }

    @Test func failureStopsEverything() {
        var n = PeerNegotiation(localUid: 1, remoteUid: 2)
        _ = n.start()
        #expect(n.failed("boom") == [.fail("boom")])
        #expect(n.failed("again") == [])
        #expect(n.received(.iceCandidate(mline: 0, candidate: "c")) == [])
        #expect(n.remoteDescriptionApplied() == [])
    }

    @Test func signalsRoundTripAsJSON() {
        let signals: [WebRTCSignal] = [
            .offer(sdp: "v=0\r\n"), .answer(sdp: "v=0"), .iceCandidate(mline: 1, candidate: "candidate:1 1 UDP"),
            .subscription(audio: true, video: false), .publishing(audio: false, video: true), .restart(generation: 3),
        ]
        for signal in signals {
            #expect(WebRTCSignal(jsonText: signal.jsonText) == signal)
        }
        #expect(WebRTCSignal(jsonText: "{\"type\":\"nope\"}") == nil)
        #expect(WebRTCSignal.restart(generation: 2).jsonText == "{\"generation\":2,\"type\":\"restart\"}")
    }
}
