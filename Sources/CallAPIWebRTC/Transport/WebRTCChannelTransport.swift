import CallAPISignalProtocol

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
///   member's signals are delivered after its ``WebRTCChannelEvent/memberJoined(_:)`` (or its presence in
///   `joined(members:iceServers:)`) and before its ``WebRTCChannelEvent/memberLeft(_:reason:)``.
/// - A member is a uid on a device (``ChannelMember``): a user's devices are separate members, and the same uid
///   and device joining again replaces the earlier membership.
/// - After ``WebRTCChannelMembership/leave()`` returns, `events` is not called again.
/// - Signals sent to one member arrive in the order sent.
public protocol WebRTCChannelTransport: Sendable {
    /// Starts joining `channel` as `uid` on `device` (`nil`: the uid's only device) with `token`.
    func join(
        channel: String, token: String, uid: UInt, device: String?,
        events: @escaping @Sendable (WebRTCChannelEvent) -> Void
    ) -> any WebRTCChannelMembership
}

/// One member's presence in a channel, as returned by
/// ``WebRTCChannelTransport/join(channel:token:uid:device:events:)``.
public protocol WebRTCChannelMembership: Sendable {
    /// Sends `signal` to `member` of the same channel. Dropped when it is not there.
    func send(_ signal: WebRTCSignal, to member: ChannelMember)
    /// Replaces the channel token.
    func renewToken(_ token: String)
    /// Leaves the channel (the others see ``WebRTCChannelEvent/memberLeft(_:reason:)`` with reason 0).
    func leave()
}
