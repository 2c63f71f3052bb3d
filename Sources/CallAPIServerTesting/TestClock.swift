import CallAPIServer
import NIOConcurrencyHelpers

/// A wall clock tests can set and move. Its sleepers wake when it is moved past their deadlines, never on their
/// own.
public final class TestClock: SignalServerClock {
    private struct Sleeper {
        var deadline: Int64
        var continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var millis: Int64
        var sleepers: [Int: Sleeper] = [:]
        var nextSleeper = 0
        var deadlineWaiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state: NIOLockedValueBox<State>

    /// A clock that reads `start` (ms since 1970) until it is moved.
    public init(_ start: Int64 = 1_800_000_000_000) { state = .init(State(millis: start)) }
    public func nowMillis() -> Int64 { state.withLockedValue { $0.millis } }

    /// Moves the clock on by `seconds` (``advance(millis:)``).
    public func advance(seconds: Double) { advance(millis: Int64(seconds * 1000)) }

    /// Moves the clock on and wakes the sleepers whose deadlines it reached.
    public func advance(millis: Int64) {
        let woken: [CheckedContinuation<Void, any Error>] = state.withLockedValue { state in
            state.millis += millis
            let due = state.sleepers.filter { $0.value.deadline <= state.millis }
            for key in due.keys { state.sleepers[key] = nil }
            return due.sorted { $0.key < $1.key }.map(\.value.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// The deadlines of the sleepers waiting now, earliest first.
    public var sleeperDeadlines: [Int64] { state.withLockedValue { $0.sleepers.values.map(\.deadline).sorted() } }

    /// Returns once someone sleeps on this clock (at once if someone does now).
    public func waitForSleeper() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLockedValue { state in
                if !state.sleepers.isEmpty { return true }
                state.deadlineWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Returns when the clock is moved to `deadline` or past it (at once if it is there already).
    public func sleep(untilMillis deadline: Int64) async throws {
        let key = state.withLockedValue { state in
            state.nextSleeper += 1
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Cancelled before it was registered: `onCancel` found nothing to resume, so end here.
                let (now, waiters): (Bool, [CheckedContinuation<Void, Never>]) = state.withLockedValue { state in
                    if deadline <= state.millis || Task.isCancelled { return (true, []) }
                    state.sleepers[key] = Sleeper(deadline: deadline, continuation: continuation)
                    defer { state.deadlineWaiters = [] }
                    return (false, state.deadlineWaiters)
                }
                if now {
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
                for waiter in waiters { waiter.resume() }
            }
        } onCancel: {
            let sleeper = state.withLockedValue { $0.sleepers.removeValue(forKey: key) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
