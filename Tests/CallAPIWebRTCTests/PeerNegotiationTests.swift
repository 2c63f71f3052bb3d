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
        #expect(n.handle(.start) == [.createOffer])
        #expect(n.handle(.localDescriptionCreated("o")) == [.applyLocal(.offer, sdp: "o"), .send(.offer(sdp: "o"))])
        #expect(n.handle(.received(.iceCandidate(mline: 0, candidate: "c1"))) == [])
        #expect(n.handle(.received(.answer(sdp: "a"))) == [.applyRemote(.answer, sdp: "a")])
        #expect(!n.isComplete, "the answer is not applied yet")
        #expect(n.handle(.received(.iceCandidate(mline: 1, candidate: "c2"))) == [])
        #expect(
            n.handle(.remoteDescriptionApplied) == [
                .addRemoteCandidate(mline: 0, candidate: "c1"), .addRemoteCandidate(mline: 1, candidate: "c2"),
            ])
        #expect(
            n.handle(.received(.iceCandidate(mline: 0, candidate: "c3")))
                == [.addRemoteCandidate(mline: 0, candidate: "c3")])
        #expect(n.isComplete && n.phase == .stable)
        #expect(n.handle(.received(.answer(sdp: "again"))) == [])
    }

    @Test func answererAnswersAfterApplyingOffer() {
        var n = PeerNegotiation(localUid: 2, remoteUid: 1)
        #expect(n.handle(.start) == [])
        #expect(n.awaitsOffer)
        #expect(n.handle(.received(.answer(sdp: "x"))) == [])
        #expect(n.handle(.received(.iceCandidate(mline: 0, candidate: "early"))) == [])
        #expect(n.handle(.received(.offer(sdp: "o"))) == [.applyRemote(.offer, sdp: "o")])
        #expect(!n.awaitsOffer)
        #expect(n.handle(.localDescriptionCreated("early")) == [])
        #expect(
            n.handle(.remoteDescriptionApplied) == [.addRemoteCandidate(mline: 0, candidate: "early"), .createAnswer])
        #expect(!n.isComplete)
        #expect(n.handle(.localDescriptionCreated("a")) == [.applyLocal(.answer, sdp: "a"), .send(.answer(sdp: "a"))])
        #expect(n.isComplete)
        #expect(n.handle(.received(.offer(sdp: "again"))) == [])
        #expect(n.handle(.remoteDescriptionApplied) == [])
    }

    @Test func anOffererNeverAwaitsAnOfferNorTakesOne() {
        var n = PeerNegotiation(localUid: 1, remoteUid: 2)
        #expect(!n.awaitsOffer)
        #expect(n.handle(.received(.offer(sdp: "o"))) == [])
        _ = n.handle(.start)
        #expect(n.handle(.received(.offer(sdp: "o"))) == [])
    }

    @Test func failureStopsEverything() {
        var n = PeerNegotiation(localUid: 1, remoteUid: 2)
        _ = n.handle(.start)
        #expect(n.handle(.failed("boom")) == [.fail("boom")])
        #expect(n.handle(.failed("again")) == [])
        #expect(n.handle(.received(.iceCandidate(mline: 0, candidate: "c"))) == [])
        #expect(n.handle(.remoteDescriptionApplied) == [])
        #expect(n.handle(.localDescriptionCreated("o")) == [])
        #expect(n.phase == .failed("boom"))
    }

    @Test func signalsThatAreNotNegotiationChangeNothing() {
        var n = PeerNegotiation(localUid: 2, remoteUid: 1)
        _ = n.handle(.start)
        for signal in [
            WebRTCSignal.subscription(audio: true, video: false), .publishing(audio: false, video: true),
            .restart(generation: 2),
        ] {
            #expect(n.handle(.received(signal)) == [])
        }
        #expect(n.phase == .awaitingOffer(waiting: []))
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
