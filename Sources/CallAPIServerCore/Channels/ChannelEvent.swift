import CallAPISignalProtocol

/// Something that happened to the channels. The time it happened is the `now` of ``ChannelState/handle(_:now:)``.
package enum ChannelEvent: Sendable {
    /// A WebSocket connection opened on the channel endpoint.
    case connected(SessionID)
    /// A connection sent a frame that decoded and fits the size limit.
    case frame(SessionID, ChannelClientFrame)
    /// A connection sent text that is not a frame.
    case undecodable(SessionID, FrameDecodingError)
    /// A connection sent a frame over the size limit.
    case oversized(SessionID, bytes: Int)
    /// A connection sent a binary message.
    case binary(SessionID)
    /// The token of a `join` or `renew` was checked (see ``ChannelAction/verifyToken(_:token:purpose:)``).
    case tokenChecked(SessionID, purpose: ChannelTokenPurpose, result: ChannelTokenCheck)
    /// The channel of a connection's join was claimed, or found elsewhere (see
    /// ``ChannelAction/claimHome(_:channel:)``).
    case homeFound(SessionID, channel: String, ChannelHome)
    /// The connection's writer wrote `frames` more frames to its socket (the oldest queued ones).
    case written(SessionID, frames: Int)
    /// The connection closed.
    case disconnected(SessionID)
    /// Time passed: join timeouts, token expiry, bars, the watchdog.
    case tick
    /// The server is shutting down: remove everyone.
    case shutdown
}

/// What a checked channel token is for.
package enum ChannelTokenPurpose: Sendable, Equatable {
    /// The token of a `join`.
    case join
    /// The token of a `renew`.
    case renew
}
