import CallAPI

/// Collects the engine events a listener got, in order.
final class EventLog: Sendable {
    private let events = Locked<[RTCEngineEvent]>([])

    var listener: @Sendable (RTCEngineEvent) -> Void { { [events] event in events.withLock { $0.append(event) } } }
    var all: [RTCEngineEvent] { events.withLock { $0 } }
    func clear() { events.withLock { $0.removeAll() } }
}
