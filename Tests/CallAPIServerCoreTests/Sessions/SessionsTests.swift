import Testing

@testable import CallAPIServerCore

/// The connections both endpoints keep: opening and closing keep table, order, deadlines and outbox totals in step,
/// and the rate limit gives one verdict per frame.
@Suite struct SessionsTests {
    enum Phase: Equatable, Sendable { case waiting, ready }

    let t0: Int64 = 1_800_000_000_000

    func makeSessions(burst: Int = 2, rate: Double = 1, maxRefusals: Int = 3, maxFrames: Int = 2)
        -> Sessions<Phase, String>
    {
        Sessions(
            rateLimit: RateLimit(ratePerSecond: rate, burst: burst, maxRefusalsInARow: maxRefusals),
            maxOutboxFrames: maxFrames, maxOutboxBytes: 1 << 20)
    }

    @Test func sessionsAreVisitedInIdOrderWhateverOrderTheyOpenedIn() {
        var sessions = makeSessions()
        for id in [5, 2, 9, 1] as [UInt64] { #expect(sessions.open(SessionID(id), phase: .waiting, now: t0) == true) }
        #expect(Array(sessions.order) == [1, 2, 5, 9].map { SessionID($0) })
        sessions.close(SessionID(5))
        #expect(Array(sessions.order) == [1, 2, 9].map { SessionID($0) })
        #expect(sessions.count == 3)
    }

    @Test func openingAnOpenSessionAgainChangesNothing() {
        var sessions = makeSessions()
        let id = SessionID(1)
        #expect(sessions.open(id, phase: .waiting, now: t0) == true)
        sessions.setPhase(.ready, of: id)
        #expect(sessions.open(id, phase: .waiting, now: t0 + 5) == false)
        #expect(sessions[id]?.phase == .ready && sessions[id]?.connectedAt == t0)
    }

    @Test func closingTakesASessionOutOfTheDeadlinesAndItsQueuedFramesOutOfTheTotals() {
        var sessions = makeSessions(maxFrames: 10)
        let (a, b) = (SessionID(1), SessionID(2))
        _ = sessions.open(a, phase: .waiting, now: t0)
        _ = sessions.open(b, phase: .waiting, now: t0)
        for cost in [100, 50] {
            #expect(sessions.enqueue(a, at: sessions.index(forKey: a)!, cost: cost, relayed: "m") == true)
        }
        #expect(sessions.enqueue(b, at: sessions.index(forKey: b)!, cost: 7, relayed: nil) == true)
        sessions.schedule(a, at: t0 + 10)
        sessions.schedule(b, at: t0 + 10)
        #expect(sessions.queuedFrames == 3 && sessions.queuedBytes == 157)

        let closed = sessions.close(a)
        #expect(closed?.outbox.unwritten == ["m", "m"])
        #expect(sessions.queuedFrames == 1 && sessions.queuedBytes == 7)
        #expect(sessions.takeDue(now: t0 + 10) == [b])
        #expect(sessions.close(a) == nil)
    }

    @Test func writtenFramesLeaveTheOutboxAndTheTotals() {
        var sessions = makeSessions(maxFrames: 10)
        let a = SessionID(1)
        _ = sessions.open(a, phase: .waiting, now: t0)
        for _ in 0..<3 { _ = sessions.enqueue(a, at: sessions.index(forKey: a)!, cost: 10, relayed: nil) }
        sessions.written(2, by: a)
        #expect(sessions.queuedFrames == 1 && sessions.queuedBytes == 10)
        sessions.written(1, by: SessionID(99))  // not open: nothing to count
        #expect(sessions.queuedFrames == 1)
    }

    @Test func aFullOutboxMakesASlowConsumerHandedOutOnceAndTakingNothingMore() {
        var sessions = makeSessions(maxFrames: 2)
        let a = SessionID(1)
        _ = sessions.open(a, phase: .waiting, now: t0)
        let index = sessions.index(forKey: a)!
        #expect(sessions.enqueue(a, at: index, cost: 1, relayed: nil) == true)
        #expect(sessions.enqueue(a, at: index, cost: 1, relayed: nil) == true)
        #expect(sessions.fits(a, cost: 1) == false)
        #expect(sessions.enqueue(a, at: index, cost: 1, relayed: nil) == false)
        sessions.written(2, by: a)
        // Written out, but noted as too slow for the rest of the event.
        #expect(sessions.fits(a, cost: 1) == false)
        #expect(sessions.nextSlowConsumer() == a)
        #expect(sessions.nextSlowConsumer() == nil)
        #expect(sessions.fits(a, cost: 1) == true)
        #expect(sessions.fits(SessionID(2), cost: 1) == false)
    }

    @Test func theRateLimitRefusesTheFirstOfARunDropsTheRestAndClosesPastTheLimit() {
        var sessions = makeSessions(burst: 2, rate: 1, maxRefusals: 3)
        let a = SessionID(1)
        _ = sessions.open(a, phase: .waiting, now: t0)
        #expect(sessions.admit(a, now: t0) == .admitted)
        #expect(sessions.admit(a, now: t0) == .admitted)
        guard case .refuseFirst(let message) = sessions.admit(a, now: t0) else {
            Issue.record("the first frame over the burst is refused with a message")
            return
        }
        #expect(message.hasPrefix("more than 2 frames at once or 1 per second"))
        #expect(sessions.admit(a, now: t0) == .dropQuietly)
        #expect(sessions.admit(a, now: t0) == .dropQuietly)
        #expect(
            sessions.admit(a, now: t0)
                == .close("4 frames in a row refused: more than 2 frames at once or 1 per second"))
        #expect(sessions.admit(SessionID(2), now: t0) == .unknownSession)
    }

    @Test func anAdmittedFrameEndsTheRunOfRefusals() {
        var sessions = makeSessions(burst: 1, rate: 1, maxRefusals: 3)
        let a = SessionID(1)
        _ = sessions.open(a, phase: .waiting, now: t0)
        #expect(sessions.admit(a, now: t0) == .admitted)
        #expect(sessions.admit(a, now: t0) != .admitted)
        #expect(sessions.admit(a, now: t0 + 1_000) == .admitted)  // a token refilled
        if case .refuseFirst = sessions.admit(a, now: t0 + 1_000) {
        } else {
            Issue.record("a new run starts with an answered refusal")
        }
        #expect(sessions[a]?.lastSeen == t0 + 1_000)
    }

    @Test func aFractionalRateIsWrittenAsItIs() {
        #expect(
            RateLimit(ratePerSecond: 2.5, burst: 4, maxRefusalsInARow: 1).exceeded
                == "more than 4 frames at once or 2.5 per second")
        #expect(
            RateLimit(ratePerSecond: 20, burst: 40, maxRefusalsInARow: 1).exceeded
                == "more than 40 frames at once or 20 per second")
    }
}
