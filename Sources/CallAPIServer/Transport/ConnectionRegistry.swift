@_spi(ServerShell) import CallAPIServerCore
import NIOCore

/// An endpoint's open WebSocket connections by id, and the ids it hands out: what ``EndpointShell`` keeps beside
/// its state machine, under the same lock (``EndpointCore``).
struct ConnectionRegistry {
    private(set) var connections = SessionTable<WebSocketConnection>()
    private var nextNumber: UInt64 = 1

    /// Registers a connection on `channel` under a new id.
    mutating func open(
        channel: any Channel, flusher: LoopFlusher, tally: WriteTally, metrics: ServerMetrics?
    ) -> WebSocketConnection {
        let id = SessionID(nextNumber)
        nextNumber += 1
        let connection = WebSocketConnection(
            id: id, channel: channel, flusher: flusher, tally: tally, metrics: metrics)
        connections[id] = connection
        return connection
    }

    /// Forgets a closed connection.
    mutating func remove(_ id: SessionID) {
        connections.removeValue(forKey: id)
    }

    subscript(id: SessionID) -> WebSocketConnection? { connections[id] }

    var count: Int { connections.count }

    /// When each connection open now closes (its socket, after any close frame).
    var closes: [EventLoopFuture<Void>] { connections.values.map(\.channel.closeFuture) }
}
