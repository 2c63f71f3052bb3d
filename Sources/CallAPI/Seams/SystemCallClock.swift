import Foundation

/// The real clock: `Date` for wall time, and for timers one shared heap of deadlines on the monotonic clock
/// (`SystemTimers`).
public struct SystemCallClock: CallClock {
    public init() {}

    public func nowMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    public func schedule(afterMillis millis: Int64, _ action: @escaping @Sendable () -> Void) -> any CallTimer {
        SystemTimers.shared.schedule(afterMillis: millis, action)
    }
}
