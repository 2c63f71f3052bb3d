/// How a ``WebRTCEngine`` meets the other members of a channel: membership, and relaying the session
/// descriptions and ICE candidates that `webrtcbin` needs. Media itself flows peer to peer.
///
/// ``InProcessChannelHub`` implements it inside one process; a signaling server's channel relay
/// implements it over its WebSocket.
///
/// ## Contract
/// - `join` returns at once; the outcome arrives through `events`: first ``WebRTCChannelEvent/joined(members:iceServers:)``
///   or ``WebRTCChannelEvent/joinFailed(code:message:)``, then member and signal events.
/// - `events` is called serially (never concurrently), in the order things happened in the channel; a
///   member's signals are delivered after its ``WebRTCChannelEvent/memberJoined(uid:)`` (or its presence in
///   `joined(members:iceServers:)`) and before its ``WebRTCChannelEvent/memberLeft(uid:reason:)``.
/// - After ``WebRTCChannelMembership/leave()`` returns, `events` is not called again.
/// - Signals sent to one member arrive in the order sent.
public protocol WebRTCChannelTransport: Sendable {
    /// Starts joining `channel` as `uid` with `token`.
    func join(
        channel: String, token: String, uid: UInt, events: @escaping @Sendable (WebRTCChannelEvent) -> Void
    ) -> any WebRTCChannelMembership
}

/// One member's presence in a channel, as returned by ``WebRTCChannelTransport/join(channel:token:uid:events:)``.
public protocol WebRTCChannelMembership: Sendable {
    /// Sends `signal` to the member `uid` of the same channel. Dropped when `uid` is not there.
    func send(_ signal: WebRTCSignal, to uid: UInt)
    /// Replaces the channel token.
    func renewToken(_ token: String)
    /// Leaves the channel (the others see ``WebRTCChannelEvent/memberLeft(uid:reason:)`` with reason 0).
    func leave()
}
