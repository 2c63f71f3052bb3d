import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The outbox bookkeeping both endpoints share: frames are counted until written, a session over its limit is
/// noted slow once and takes nothing more in that event, and the totals follow writes and closed sessions.
@Suite struct OutboxAccountingTests {
    @Test func aSessionOverItsLimitIsNotedSlowAndTakesNothingMoreThisEvent() {
        var accounting = OutboxAccounting(maxFrames: 2, maxBytes: 1_000)
        var outbox = OutboxLedger<Int>()
        let id = SessionID(7)
        #expect(accounting.admit(id, cost: 100, relayed: 1, into: &outbox))
        #expect(accounting.admit(id, cost: 100, relayed: nil, into: &outbox))
        #expect(accounting.frames == 2 && accounting.bytes == 200)
        #expect(!accounting.fits(id, cost: 10, outbox: outbox))
        #expect(!accounting.admit(id, cost: 10, relayed: 2, into: &outbox))
        #expect(accounting.slowConsumers == [id])
        // Written frames leave the count, but a session found slow stays so until the event ends.
        accounting.written(2, from: &outbox)
        #expect(accounting.frames == 0 && accounting.bytes == 0)
        #expect(!accounting.admit(id, cost: 10, relayed: 3, into: &outbox))
        #expect(accounting.slowConsumers == [id])
        #expect(accounting.nextSlowConsumer() == id)
        // Handed out for closing, it still takes nothing until the event ends.
        #expect(!accounting.admit(id, cost: 10, relayed: 3, into: &outbox))
        #expect(accounting.nextSlowConsumer() == nil)
        #expect(accounting.slowConsumers.isEmpty)
        #expect(accounting.admit(id, cost: 10, relayed: 4, into: &outbox))
        #expect(outbox.unwritten == [4])
    }

    @Test func bytesAreLimitedTooAndAForgottenOutboxLeavesTheTotals() {
        var accounting = OutboxAccounting(maxFrames: 100, maxBytes: 250)
        var first = OutboxLedger<Int>()
        var second = OutboxLedger<Int>()
        #expect(accounting.admit(SessionID(1), cost: 200, relayed: nil, into: &first))
        #expect(!accounting.admit(SessionID(1), cost: 100, relayed: nil, into: &first))
        // An empty outbox always takes one frame, however large, so a big frame is never refused outright.
        #expect(accounting.admit(SessionID(2), cost: 400, relayed: nil, into: &second))
        #expect(accounting.frames == 2 && accounting.bytes == 600)
        accounting.forget(first)
        #expect(accounting.frames == 1 && accounting.bytes == 400)
    }

    @Test func slowConsumersFoundWhileClosingOthersAreHandedOutInTheSameEvent() {
        var accounting = OutboxAccounting(maxFrames: 1, maxBytes: 1_000)
        var first = OutboxLedger<Int>()
        var second = OutboxLedger<Int>()
        #expect(accounting.admit(SessionID(1), cost: 10, relayed: nil, into: &first))
        #expect(accounting.admit(SessionID(2), cost: 10, relayed: nil, into: &second))
        #expect(!accounting.admit(SessionID(1), cost: 10, relayed: nil, into: &first))
        #expect(accounting.nextSlowConsumer() == SessionID(1))
        // Closing the first overflows the second (a notice to it, say): it is handed out next, in this event.
        #expect(!accounting.admit(SessionID(2), cost: 10, relayed: nil, into: &second))
        #expect(accounting.nextSlowConsumer() == SessionID(2))
        #expect(accounting.nextSlowConsumer() == nil)
        #expect(accounting.slowConsumers.isEmpty)
        // The next event starts afresh: neither is slow any more once its frames are written.
        accounting.written(1, from: &first)
        #expect(accounting.admit(SessionID(1), cost: 10, relayed: nil, into: &first))
    }
}
