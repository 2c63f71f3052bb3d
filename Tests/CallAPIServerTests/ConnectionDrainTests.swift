import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// Shutdown's drain: woken by the connections' closes, bounded by the drain time, on a loop whose clock the test
/// moves by hand.
@Suite struct ConnectionDrainTests {
    private let loop = EmbeddedEventLoop()

    /// Whether `future` has completed, read on the embedded loop (its callbacks run at once).
    private func isComplete(_ future: EventLoopFuture<Void>) -> Bool {
        let complete = NIOLockedValueBox(false)
        future.whenComplete { _ in complete.withLockedValue { $0 = true } }
        return complete.withLockedValue { $0 }
    }

    @Test func theDrainEndsWhenTheLastConnectionClosesNotBefore() {
        let first = loop.makePromise(of: Void.self)
        let second = loop.makePromise(of: Void.self)
        let drained = ConnectionDrain.drained(
            [first.futureResult, second.futureResult], atMost: .seconds(30), on: loop)
        loop.advanceTime(by: .seconds(5))
        first.succeed()
        #expect(!isComplete(drained))
        // A connection that closes with an error has closed all the same.
        second.fail(ChannelError.alreadyClosed)
        #expect(isComplete(drained))
        // The limit's timer was cancelled: nothing runs at the limit.
        loop.advanceTime(by: .seconds(60))
    }

    @Test func aConnectionThatNeverClosesHoldsTheDrainForItsLimitOnly() {
        let stuck = loop.makePromise(of: Void.self)
        let drained = ConnectionDrain.drained([stuck.futureResult], atMost: .seconds(30), on: loop)
        loop.advanceTime(by: .seconds(29))
        #expect(!isComplete(drained))
        loop.advanceTime(by: .seconds(1))
        #expect(isComplete(drained))
        // It closes later (aborted): the drain, already over, is not completed twice.
        stuck.succeed()
    }

    @Test func nothingToDrainReturnsAtOnce() async {
        await ConnectionDrain.wait(for: [], atMost: .seconds(30))
    }
}
