/// A signaling adapter's connection listeners (``ISignalConnectionListener``), held weakly. A value: keep it behind
/// your adapter's lock (docs/adapters.md). Message listeners go in a ``SignalMessageListeners``, which also keeps
/// what arrives before the first one is added.
public struct SignalAdapterListeners: Sendable {
    private struct Connection: Sendable {
        weak var listener: (any ISignalConnectionListener)?
    }

    private var connections: [Connection] = []

    public init() {}

    public mutating func add(_ listener: any ISignalConnectionListener) {
        remove(listener)
        connections.append(Connection(listener: listener))
    }

    public mutating func remove(_ listener: any ISignalConnectionListener) {
        connections.removeAll { $0.listener == nil || $0.listener === listener }
    }

    public var connectionListeners: [any ISignalConnectionListener] { connections.compactMap(\.listener) }
}
