import CallAPISignalProtocol

/// Something that happened to the channels. Times are milliseconds since 1970 on the server's clock.
public enum ChannelEvent: Sendable {
    /// A WebSocket connection opened on the channel endpoint.
    case connected(SessionID, now: Int64)
    /// A connection sent a frame that decoded and fits the size limit.
    case frame(SessionID, ChannelClientFrame, now: Int64)
    /// A connection sent text that is not a frame.
    case undecodable(SessionID, FrameDecodingError, now: Int64)
    /// A connection sent a frame over the size limit.
    case oversized(SessionID, bytes: Int, now: Int64)
    /// A connection sent a binary message.
    case binary(SessionID, now: Int64)
    /// The token of a `join` or `renew` was checked (see ``ChannelAction/verifyToken(_:token:purpose:)``).
    case tokenChecked(SessionID, purpose: ChannelTokenPurpose, result: ChannelTokenCheck, now: Int64)
    /// The connection's writer wrote `frames` more frames to its socket (the oldest queued ones).
    case written(SessionID, frames: Int)
    /// The connection closed.
    case disconnected(SessionID, now: Int64)
    /// The operator kicks `uid` out of `channel` and bars it for `barSeconds` (0: no bar).
    case kick(channel: String, uid: UInt, barSeconds: Int, reason: String?, now: Int64)
    /// Time passed: join timeouts, token expiry, bars, the watchdog.
    case tick(now: Int64)
    /// The server is shutting down: remove everyone.
    case shutdown(now: Int64)
}

extension ChannelEvent {
    /// When the event happened, for the events that carry a time.
    var time: Int64? {
        switch self {
        case .connected(_, let now), .frame(_, _, let now), .undecodable(_, _, let now), .oversized(_, _, let now),
            .binary(_, let now), .tokenChecked(_, _, _, let now), .disconnected(_, let now),
            .kick(_, _, _, _, let now), .tick(let now), .shutdown(let now):
            now
        case .written:
            nil
        }
    }
}

/// What a checked channel token is for.
public enum ChannelTokenPurpose: Sendable, Equatable {
    /// The token of a `join`.
    case join
    /// The token of a `renew`.
    case renew
}
