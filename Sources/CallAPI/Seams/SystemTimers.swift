import Dispatch

/// The timers of every ``SystemCallClock``: one heap of deadlines and one dispatch timer, armed for the earliest.
///
/// A task per timer (`Task.sleep`, then `cancel()` waking it to throw) cost about a third of the calls bench's
/// client CPU per call: a call starts and stops a dozen timers on each side (ring, retries, liveness), nearly all
/// cancelled before they are due. Here a timer is an entry in a heap; scheduling one arms the dispatch timer only
/// when it is the new earliest, and cancelling one only takes it out. A wake that finds its earliest entry cancelled
/// arms for the next. Deadlines are on `ContinuousClock`, as `Task.sleep`'s were: a change of wall-clock time moves no
/// timer, and time the system spends suspended counts (a wake the suspension delayed finds every deadline passed
/// meanwhile due).
final class SystemTimers: Sendable {
    static let shared = SystemTimers()

    /// A heap of its own (tests); apps use ``shared`` through ``SystemCallClock``.
    init() {}

    private struct State {
        var heap = TimerHeap<@Sendable () -> Void>()
        /// The deadline the dispatch timer is armed for, and which arming it is (a wake from an earlier one, since
        /// replaced by an earlier deadline, does nothing).
        var armed: Arming?
        var armings: UInt64 = 0
    }

    private struct Arming {
        let deadline: UInt64
        let number: UInt64
    }

    private let state = Locked(State())
    private let queue = DispatchQueue(label: "CallAPI.SystemTimers")
    /// Deadlines are nanoseconds since this instant.
    private let origin = ContinuousClock.now

    private func nanosecondsNow() -> UInt64 {
        let elapsed = origin.duration(to: .now).components
        return UInt64(elapsed.seconds) &* 1_000_000_000 &+ UInt64(elapsed.attoseconds / 1_000_000_000)
    }

    /// Runs `action` (on a global queue) once `millis` milliseconds have passed, unless cancelled first.
    func schedule(afterMillis millis: Int64, _ action: @escaping @Sendable () -> Void) -> any CallTimer {
        // Saturating: a timer too far off to count in nanoseconds waits for ever, it does not wrap round to now.
        let (delay, overflow) = UInt64(max(0, millis)).multipliedReportingOverflow(by: 1_000_000)
        let (sum, late) = nanosecondsNow().addingReportingOverflow(delay)
        let deadline = overflow || late ? UInt64.max : sum
        let (key, arming) = state.withLock { state -> (TimerHeap<@Sendable () -> Void>.Key, Arming?) in
            let key = state.heap.insert(action, deadline: deadline)
            if let armed = state.armed, armed.deadline <= deadline { return (key, nil) }
            return (key, Self.arm(&state, for: deadline))
        }
        if let arming { wake(at: arming) }
        return Timer(key: key, timers: self)
    }

    private static func arm(_ state: inout State, for deadline: UInt64) -> Arming {
        state.armings &+= 1
        let arming = Arming(deadline: deadline, number: state.armings)
        state.armed = arming
        return arming
    }

    private func wake(at arming: Arming) {
        let delay = arming.deadline &- min(arming.deadline, nanosecondsNow())
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: delay))) { self.woke(arming) }
    }

    private func woke(_ arming: Arming) {
        // Never earlier than the deadline armed for, whatever the clock read says.
        let now = max(nanosecondsNow(), arming.deadline)
        let (due, next) = state.withLock { state -> ([@Sendable () -> Void], Arming?) in
            guard state.armed?.number == arming.number else { return ([], nil) }
            state.armed = nil
            let due = state.heap.takeDue(now: now)
            return (due, state.heap.earliestDeadline.map { Self.arm(&state, for: $0) })
        }
        if let next { wake(at: next) }
        for action in due { DispatchQueue.global().async(execute: action) }
    }

    private func cancel(_ key: TimerHeap<@Sendable () -> Void>.Key) {
        // The dispatch timer stays armed: if this was the earliest, its wake finds nothing due and arms for the next.
        _ = state.withLock { $0.heap.remove(key) }
    }

    /// How many timers wait (for tests).
    var pending: Int { state.withLock { $0.heap.count } }

    private struct Timer: CallTimer {
        let key: TimerHeap<@Sendable () -> Void>.Key
        let timers: SystemTimers

        func cancel() { timers.cancel(key) }
    }
}
