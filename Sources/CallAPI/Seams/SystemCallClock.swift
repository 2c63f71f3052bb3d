import Foundation

/// The real clock: `Date` for wall time and task sleeps for timers.
public struct SystemCallClock: CallClock {
    public init() {}

    public func nowMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    public func schedule(afterMillis millis: Int64, _ action: @escaping @Sendable () -> Void) -> any CallTimer {
        TaskTimer(
            task: Task {
                try await Task.sleep(for: .milliseconds(max(0, millis)))
                action()
            })
    }

    private struct TaskTimer: CallTimer {
        let task: Task<Void, any Error>
        func cancel() { task.cancel() }
    }
}
