import CallAPI

/// An ``ISignalConnectionListener`` that streams what it hears.
final class ConnectionEvents: ISignalConnectionListener {
    enum Event: Sendable, Equatable {
        case connected
        case disconnected
        case tokenWillExpire
    }

    let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation

    init() {
        (events, continuation) = AsyncStream.makeStream()
    }

    func onConnected() { continuation.yield(.connected) }
    func onDisconnected(error: any Error) { continuation.yield(.disconnected) }
    func onTokenPrivilegeWillExpire() { continuation.yield(.tokenWillExpire) }

    func next(_ event: Event, within seconds: Double = 10) async throws {
        _ = try await events.first(within: seconds, "\(event)") { $0 == event }
    }
}
