/// A signaling adapter's listeners, held weakly as ``ISignalClient/addListener(listener:)`` asks: those that
/// receive messages and those that hear the connection (``ISignalConnectionListener``). For the adapters in
/// this package; keep it inside a lock.
package struct SignalAdapterListeners: Sendable {
    private struct Message: Sendable {
        weak var listener: (any ISignalClientListener)?
    }

    private struct Connection: Sendable {
        weak var listener: (any ISignalConnectionListener)?
    }

    private var messages: [Message] = []
    private var connections: [Connection] = []

    package init() {}

    package mutating func add(_ listener: any ISignalClientListener) {
        remove(listener)
        messages.append(Message(listener: listener))
    }

    package mutating func remove(_ listener: any ISignalClientListener) {
        messages.removeAll { $0.listener == nil || $0.listener === listener }
    }

    package mutating func add(_ listener: any ISignalConnectionListener) {
        remove(listener)
        connections.append(Connection(listener: listener))
    }

    package mutating func remove(_ listener: any ISignalConnectionListener) {
        connections.removeAll { $0.listener == nil || $0.listener === listener }
    }

    package var messageListeners: [any ISignalClientListener] { messages.compactMap(\.listener) }
    package var connectionListeners: [any ISignalConnectionListener] { connections.compactMap(\.listener) }
}
