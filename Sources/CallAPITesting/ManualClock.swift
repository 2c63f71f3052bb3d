import CallAPI

/// A clock that moves only when told to, so ring timeouts and latencies run without waiting.
///
/// Timers run on the thread that calls ``advance(byMillis:)``, in due order (ties in scheduling order),
/// with ``nowMillis()`` reading each timer's due time while it runs.
public final class ManualClock: CallClock {
    private struct Entry: Sendable {
        var id: Int
        var due: Int64
        var action: @Sendable () -> Void
    }

    private struct State: Sendable {
        var now: Int64
        var entries: [Entry] = []
        var nextId = 0
    }

    private let state: Locked<State>

    /// - Parameter startMillis: the wall time it starts at (default: 2026-01-01T00:00:00Z).
    public init(startMillis: Int64 = 1_767_225_600_000) {
        state = Locked(State(now: startMillis))
    }

    public func nowMillis() -> Int64 { state.withLock { $0.now } }

    /// Timers scheduled and not yet run or cancelled.
    public var pendingTimers: Int { state.withLock { $0.entries.count } }

    public func schedule(afterMillis millis: Int64, _ action: @escaping @Sendable () -> Void) -> any CallTimer {
        let id = state.withLock { state in
            state.nextId += 1
            state.entries.append(Entry(id: state.nextId, due: state.now + max(0, millis), action: action))
            return state.nextId
        }
        return ManualTimer { [weak self] in self?.state.withLock { $0.entries.removeAll { $0.id == id } } }
    }

    /// Moves time forward by `millis`, running every timer that falls due on the way, including timers
    /// those timers schedule.
    public func advance(byMillis millis: Int64) {
        let target = state.withLock { $0.now + max(0, millis) }
        while let entry = popDue(before: target) {
            entry.action()
        }
        state.withLock { $0.now = max($0.now, target) }
    }

    /// Runs everything due now (timers scheduled with no delay).
    public func runDue() { advance(byMillis: 0) }

    private func popDue(before target: Int64) -> Entry? {
        state.withLock { state -> Entry? in
            guard
                let index = state.entries.indices.min(by: { a, b in
                    let (x, y) = (state.entries[a], state.entries[b])
                    return (x.due, x.id) < (y.due, y.id)
                }), state.entries[index].due <= target
            else { return nil }
            let entry = state.entries.remove(at: index)
            state.now = max(state.now, entry.due)
            return entry
        }
    }

    private struct ManualTimer: CallTimer {
        let onCancel: @Sendable () -> Void
        func cancel() { onCancel() }
    }
}
