import CallAPIServerCore
import NIOCore

/// Waits for closing connections at shutdown: until each has closed or a time limit has passed, whichever comes
/// first, woken by the closes themselves rather than by polling a count.
enum ConnectionDrain {
    /// Returns when every future in `closes` has completed, or after `limit`.
    static func wait(for closes: [EventLoopFuture<Void>], atMost limit: Duration) async {
        guard let loop = closes.first?.eventLoop else { return }
        try? await drained(closes, atMost: TimeAmount(limit), on: loop).get()
    }

    /// Succeeds on `loop` when every future in `closes` has completed (however it completed), or after `limit`.
    static func drained(
        _ closes: [EventLoopFuture<Void>], atMost limit: TimeAmount, on loop: any EventLoop
    ) -> EventLoopFuture<Void> {
        // Completed by whichever comes first; NIO ignores the second completion.
        let done = loop.makePromise(of: Void.self)
        let timer = loop.scheduleTask(in: limit) { done.succeed() }
        EventLoopFuture.andAllComplete(closes, on: loop).whenComplete { _ in
            timer.cancel()
            done.succeed()
        }
        return done.futureResult
    }
}
