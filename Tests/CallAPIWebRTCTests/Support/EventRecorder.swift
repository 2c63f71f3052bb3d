import CallAPI
import Foundation

/// Records what an engine reports and lets a test await a particular event (past or future).
final class EventRecorder: Sendable {
    private struct Waiter: Sendable {
        let match: @Sendable (RTCEngineEvent) -> Bool
        let continuation: CheckedContinuation<RTCEngineEvent, any Error>
    }

    private struct State: Sendable {
        var events: [RTCEngineEvent] = []
        var waiters: [UUID: Waiter] = [:]
    }

    private let state = Locked(State())

    /// Records the events of `engine` from now on.
    init(_ engine: any CallRTCEngine) {
        engine.addEventListener { [weak self] event in self?.record(event) }
    }

    var events: [RTCEngineEvent] { state.withLock { $0.events } }

    func record(_ event: RTCEngineEvent) {
        let ready = state.withLock { state -> [Waiter] in
            state.events.append(event)
            let ids = state.waiters.filter { $0.value.match(event) }.map(\.key)
            return ids.compactMap { state.waiters.removeValue(forKey: $0) }
        }
        for waiter in ready { waiter.continuation.resume(returning: event) }
    }

    /// The first event equal to `event`, waiting up to `seconds`.
    @discardableResult
    func wait(for event: RTCEngineEvent, seconds: Double = 20) async throws -> RTCEngineEvent {
        try await wait("\(event)", seconds: seconds) { $0 == event }
    }

    /// The first event matching `match` among those recorded from the `from`th on, waiting up to `seconds`.
    func wait(
        _ what: String, seconds: Double = 20, from: Int = 0, _ match: @escaping @Sendable (RTCEngineEvent) -> Bool
    ) async throws -> RTCEngineEvent {
        try await within(seconds, what) { try await self.next(from: from, match) }
    }

    private func next(from: Int, _ match: @escaping @Sendable (RTCEngineEvent) -> Bool) async throws
        -> RTCEngineEvent
    {
        let id = UUID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let found = state.withLock { state -> RTCEngineEvent? in
                    if let found = state.events.dropFirst(from).first(where: match) { return found }
                    if Task.isCancelled { return nil }
                    state.waiters[id] = Waiter(match: match, continuation: continuation)
                    return nil
                }
                if let found {
                    continuation.resume(returning: found)
                } else if Task.isCancelled, state.withLock({ $0.waiters[id] == nil }) {
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }
}
