import Testing

@testable import CallAPIWebRTC

/// The media watch's judgement of one peer's media: silence from a publishing peer is a broken path; a restarted link
/// that brings media again has resumed; a negotiated link that never brings media is restarted.
@Suite struct MediaFlowTests {
    @Test func mediaThatStopsWhileThePeerPublishesIsAnInterruptionAndItsReturnAResumption() {
        var decision = MediaFlow.Decision.nothing
        var flow = MediaFlow.waiting(since: 0)
        decision = flow.watch(publishes: true, negotiated: true, lastArrival: 1_000, now: 1_000)
        #expect(decision == .nothing)
        #expect(flow == .flowing)
        // Silence up to the limit is a hiccup; past it, the path is broken.
        decision = flow.watch(publishes: true, negotiated: true, lastArrival: 1_000, now: 2_500)
        #expect(decision == .nothing)
        decision = flow.watch(publishes: true, negotiated: true, lastArrival: 1_000, now: 2_600)
        #expect(decision == .interrupted)
        #expect(flow == .interrupted(lastMedia: 1_000, restartedAt: 2_600))
        // The new link: nothing yet (its arrivals start empty), then media 1.9 s after the break's last.
        decision = flow.watch(publishes: true, negotiated: false, lastArrival: nil, now: 2_800)
        #expect(decision == .nothing)
        decision = flow.watch(publishes: true, negotiated: true, lastArrival: 2_900, now: 3_000)
        #expect(decision == .resumed(gapMillis: 1_900))
        #expect(flow == .flowing)
    }

    @Test func aRestartedLinkWithoutMediaIsRestartedAgainAfterTheRetryTime() {
        var decision = MediaFlow.Decision.nothing
        var flow = MediaFlow.interrupted(lastMedia: 1_000, restartedAt: 2_000)
        decision = flow.watch(publishes: true, negotiated: true, lastArrival: nil, now: 7_000)
        #expect(decision == .nothing)
        decision = flow.watch(publishes: true, negotiated: true, lastArrival: nil, now: 7_001)
        #expect(decision == .restart)
        #expect(flow == .interrupted(lastMedia: 1_000, restartedAt: 7_001))
    }

    @Test func silenceFromAPeerThatPublishesNothingThisMemberTakesIsNotABreak() {
        var decision = MediaFlow.Decision.nothing
        var flow = MediaFlow.flowing
        decision = flow.watch(publishes: false, negotiated: true, lastArrival: 1_000, now: 10_000)
        #expect(decision == .nothing)
        #expect(flow == .waiting(since: 10_000))
        // Publishing again: the old arrival does not count, so no false alarm until media is due.
        decision = flow.watch(publishes: true, negotiated: true, lastArrival: 1_000, now: 10_250)
        #expect(decision == .nothing)
        decision = flow.watch(publishes: true, negotiated: true, lastArrival: 10_300, now: 10_500)
        #expect(decision == .nothing)
        #expect(flow == .flowing)
    }

    @Test func aNegotiatedLinkThatNeverBringsMediaIsRestartedWithoutAReport() {
        var decision = MediaFlow.Decision.nothing
        var flow = MediaFlow.waiting(since: 0)
        // Negotiating: the clock waits for the negotiation.
        decision = flow.watch(publishes: true, negotiated: false, lastArrival: nil, now: 3_000)
        #expect(decision == .nothing)
        decision = flow.watch(publishes: true, negotiated: true, lastArrival: nil, now: 7_000)
        #expect(decision == .nothing)
        decision = flow.watch(publishes: true, negotiated: true, lastArrival: nil, now: 7_001)
        #expect(decision == .restart)
        #expect(flow == .waiting(since: 7_001))
    }

    @Test func aRestartFromThePeerIsReportedOnlyWhereMediaWasFlowing() {
        var reported = false
        var flowing = MediaFlow.flowing
        reported = flowing.peerRestarted(lastArrival: 900, now: 1_000)
        #expect(reported)
        #expect(flowing == .interrupted(lastMedia: 900, restartedAt: 1_000))
        var interrupted = MediaFlow.interrupted(lastMedia: 900, restartedAt: 1_000)
        reported = interrupted.peerRestarted(lastArrival: nil, now: 1_200)
        #expect(!reported)
        #expect(interrupted == .interrupted(lastMedia: 900, restartedAt: 1_200))
        var waiting = MediaFlow.waiting(since: 0)
        reported = waiting.peerRestarted(lastArrival: nil, now: 1_200)
        #expect(!reported)
        #expect(waiting == .waiting(since: 1_200))
    }
}
