import Testing

@testable import CallAPI

/// ``SystemCallClock``'s timers on the real clock: they fire, and a cancelled one leaves the heap at once. (The
/// order and removal logic is ``TimerHeapTests``'s; here only what needs the dispatch timer.)
@Suite("System timers")
struct SystemTimersTests {
    @Test("Scheduled actions run; cancelled ones leave the heap before they are due")
    func fireAndCancel() async {
        let timers = SystemTimers()
        // Far in the future, and cancelled: only its removal is observable.
        let cancelled = timers.schedule(afterMillis: 60_000) {}
        #expect(timers.pending == 1)
        cancelled.cancel()
        #expect(timers.pending == 0)
        // Scheduled latest first, so each re-arms the dispatch timer earlier; all must still run.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let left = Locked(3)
            for millis in [20, 10, 1] as [Int64] {
                _ = timers.schedule(afterMillis: millis) {
                    if left.withLock({ left -> Int in
                        left -= 1
                        return left
                    }) == 0 {
                        done.resume()
                    }
                }
            }
        }
        #expect(timers.pending == 0)
    }

    @Test("A timer too far off to count in nanoseconds waits; it does not wrap round and fire at once")
    func farTimerWaits() async {
        let timers = SystemTimers()
        // Some milliseconds on the heap's own clock first, so that a wrapped deadline would land in the past.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            _ = timers.schedule(afterMillis: 5) { done.resume() }
        }
        let far = Locked(false)
        let farTimer = timers.schedule(afterMillis: .max) { far.withLock { $0 = true } }
        // A wake for a near timer takes every entry due by then: a wrapped deadline would be among them.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            _ = timers.schedule(afterMillis: 1) { done.resume() }
        }
        #expect(timers.pending == 1)
        #expect(far.withLock { $0 } == false)
        farTimer.cancel()
        #expect(timers.pending == 0)
    }
}
