/// The numeric codes of `joinFailed`, `error` and `removed` channel frames.
public enum ChannelErrorCode: Int, Codable, Sendable, Equatable, CaseIterable {
    /// The token is not one the server signed, is malformed, or is not an RTC token.
    case invalidToken = 1
    /// The token has expired.
    case tokenExpired = 2
    /// The token is for another channel (or for any channel, which this server does not accept).
    case wrongChannel = 3
    /// The token's subject is not the uid that joined.
    case wrongUser = 4
    /// The uid was kicked from the channel and may not rejoin yet; the message says for how long.
    case barred = 5
    /// The channel already has as many members as the server allows.
    case channelFull = 6
    /// The frame was not valid: not JSON, an unknown type, a missing or wrong field, or out of order.
    case malformed = 7
    /// The operator removed the member (`POST /v1/channels/{channel}/kick`).
    case kicked = 8
    /// The same uid joined the channel again; this older membership was removed.
    case replaced = 9
    /// The member stayed alone in a channel that had two members for longer than the server's watchdog allows.
    case watchdog = 10
    /// The server is shutting down.
    case serverShutdown = 11
    /// No `join` arrived within the server's login timeout.
    case joinTimeout = 12
    /// The frame was larger than the server's frame limit.
    case tooLarge = 14
    /// The connection did not read its socket fast enough: its outbox passed the server's limit (close only; also
    /// the reason a `signalFailed` gives for signals such a member never got).
    case slowConsumer = 15
    /// The connection sent frames faster than the server allows.
    case rateLimited = 16
    /// The token was issued before its uid was kicked from the channel: it may not join (or renew) there again;
    /// a token issued since may.
    case tokenRevoked = 17
    /// The channel's members meet on another node of the cluster (`joinFailed` only): join there, at the address
    /// the frame's `location` gives when that node advertises one (docs/scale-out.md).
    case channelElsewhere = 18
    /// Client side only, never sent by a server: the connection failed or was lost.
    case connectionLost = 100

    /// The WebSocket close code that follows a `joinFailed` or `removed` with this code: 1001 on shutdown,
    /// otherwise 4000 + the code.
    public var closeCode: UInt16 {
        self == .serverShutdown ? 1001 : 4000 + UInt16(rawValue)
    }
}
