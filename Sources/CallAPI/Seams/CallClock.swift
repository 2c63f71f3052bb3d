/// Time as CallAPI sees it: wall time for timestamps and cost figures, and one-shot timers.
/// ``SystemCallClock`` is the real one; `CallAPITesting.ManualClock` lets tests move time by hand.
public protocol CallClock: Sendable {
    /// Milliseconds since 1970.
    func nowMillis() -> Int64
    /// Runs `action` once after `millis` milliseconds unless the returned timer is cancelled first.
    func schedule(afterMillis millis: Int64, _ action: @escaping @Sendable () -> Void) -> any CallTimer
}

/// A scheduled one-shot action.
public protocol CallTimer: Sendable {
    /// Prevents the action from running if it has not run yet.
    func cancel()
}
