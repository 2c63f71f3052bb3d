import CallAPIServerCore
import NIOCore

/// A WebSocket endpoint's shell as the transport sees it: the signaling hub (`/v1/signal`) and the channel hub
/// (`/v1/rtc`) both serve their connections through ``WebSocketSessionHandler``.
///
/// Every method is called on the connection's event loop, synchronously: the endpoint runs its state machine
/// under its own lock and queues what it writes on the receivers' ``WebSocketConnection``s.
protocol SessionEndpoint: Sendable {
    /// Messages larger than this close the socket (1009) instead of reaching the endpoint.
    var maxMessageBytes: Int { get }
    /// A WebSocket connection opened on `channel`: registers it and returns its connection.
    func open(channel: any Channel, flusher: LoopFlusher) -> WebSocketConnection
    /// A complete text message arrived, as its bytes (checked as valid UTF-8, within ``maxMessageBytes``; lent for
    /// the call). Returns whether the session is still open: once the endpoint has closed it, the transport reads
    /// no further.
    func received(utf8 text: UnsafeBufferPointer<UInt8>, on id: SessionID, at instant: NIODeadline) -> Bool
    /// A binary message arrived.
    func receivedBinary(on id: SessionID)
    /// The socket closed.
    func closed(_ id: SessionID)
}
