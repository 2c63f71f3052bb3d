/// The events every session machine has, which its endpoint shell builds itself: a connection opened, wrote, sent
/// binary or closed, time passed, the server shuts down.
///
/// ``HubEvent`` and ``ChannelEvent`` conform with their own cases, which satisfy these requirements as they are.
package protocol SessionEvent: Sendable {
    /// A WebSocket connection opened.
    static func connected(_ id: SessionID) -> Self
    /// The connection closed.
    static func disconnected(_ id: SessionID) -> Self
    /// The connection sent a binary message.
    static func binary(_ id: SessionID) -> Self
    /// The connection's writer wrote `frames` more frames to its socket (the oldest queued ones).
    static func written(_ id: SessionID, frames: Int) -> Self
    /// Time passed: the time-based checks.
    static var tick: Self { get }
    /// The server is shutting down.
    static var shutdown: Self { get }
}
