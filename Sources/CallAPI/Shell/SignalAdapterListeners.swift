/// A signaling adapter's listeners, held weakly as ``ISignalClient/addListener(listener:)`` asks: those that
/// receive messages and those that hear the connection (``ISignalConnectionListener``). A value: keep it
/// behind your adapter's lock (docs/adapters.md).
public struct SignalAdapterListeners: Sendable {
    private struct Message: Sendable {
        weak var listener: (any ISignalClientListener)?
    }

    private struct Connection: Sendable {
        weak var listener: (any ISignalConnectionListener)?
    }

    private var messages: [Message] = []
    private var connections: [Connection] = []

    public init() {}

    public mutating func add(_ listener: any ISignalClientListener) {
        remove(listener)
        messages.append(Message(listener: listener))
    }

    public mutating func remove(_ listener: any ISignalClientListener) {
        messages.removeAll { $0.listener == nil || $0.listener === listener }
    }

    public mutating func add(_ listener: any ISignalConnectionListener) {
        remove(listener)
        connections.append(Connection(listener: listener))
    }

    public mutating func remove(_ listener: any ISignalConnectionListener) {
        connections.removeAll { $0.listener == nil || $0.listener === listener }
    }

    public var messageListeners: [any ISignalClientListener] { messages.compactMap(\.listener) }
    public var connectionListeners: [any ISignalConnectionListener] { connections.compactMap(\.listener) }
}
