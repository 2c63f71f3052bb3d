import Testing

@testable import CallAPIServerCore

/// When the hub's tick visits a session: only once something of it is due, in id order, however its deadlines move.
@Suite struct SessionDeadlinesTests {
    let a = SessionID(1)
    let b = SessionID(2)
    let c = SessionID(3)

    @Test func dueSessionsComeOutOnceInIdOrderAndTheOthersStay() {
        var deadlines = SessionDeadlines()
        deadlines.schedule(c, at: 100)
        deadlines.schedule(a, at: 300)
        deadlines.schedule(b, at: 50)
        #expect(deadlines.takeDue(now: 49).isEmpty)
        #expect(deadlines.takeDue(now: 100) == [b, c])
        #expect(deadlines.takeDue(now: 299).isEmpty)
        #expect(deadlines.takeDue(now: 1_000) == [a])
        #expect(deadlines.takeDue(now: 2_000).isEmpty)
    }

    @Test func aLaterDeadlineWaitsForTheEarlierEntryAndAnEarlierOneReplacesIt() {
        var deadlines = SessionDeadlines()
        deadlines.schedule(a, at: 100)
        deadlines.schedule(a, at: 500)  // moved later: the entry at 100 stands
        #expect(deadlines.takeDue(now: 100) == [a])
        #expect(deadlines.takeDue(now: 500).isEmpty)  // nothing was added for 500
        deadlines.schedule(b, at: 400)
        deadlines.schedule(b, at: 200)  // moved earlier: the entry at 400 goes stale
        #expect(deadlines.takeDue(now: 200) == [b])
        #expect(deadlines.takeDue(now: 400).isEmpty)
    }

    @Test func aSessionThatHasGoneIsNeverDue() {
        var deadlines = SessionDeadlines()
        deadlines.schedule(a, at: 100)
        deadlines.schedule(b, at: 100)
        deadlines.remove(a)
        #expect(deadlines.takeDue(now: 100) == [b])
    }

    @Test func staleEntriesStayBoundedHoweverOftenADeadlineMovesEarlier() {
        var deadlines = SessionDeadlines()
        deadlines.schedule(b, at: 1_000_000)
        for step in 0..<10_000 { deadlines.schedule(a, at: 500_000 - Int64(step)) }
        // Two live entries; stale ones are dropped once they outnumber the live ones by the allowed slack.
        #expect(deadlines.entryCount <= 2 * 2 + 1024 + 1)
        #expect(deadlines.takeDue(now: 490_001) == [a])
        #expect(deadlines.takeDue(now: 999_999).isEmpty)
        #expect(deadlines.takeDue(now: 1_000_000) == [b])
    }
}
