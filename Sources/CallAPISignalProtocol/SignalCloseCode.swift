/// The WebSocket close codes the server uses, by reason. A `closing` frame with the reason comes first.
public enum SignalCloseCode {
    /// Normal closure (logout).
    public static let normal: UInt16 = 1000
    /// Going away (server shutdown): reconnect later.
    public static let goingAway: UInt16 = 1001
    /// The token expired: log in again with a new token.
    public static let tokenExpired: UInt16 = 4001
    /// Nothing arrived within the idle timeout.
    public static let idleTimeout: UInt16 = 4002
    /// No login within the login timeout.
    public static let loginTimeout: UInt16 = 4003
    /// Slow consumer: the session's outbox passed the server's frame or byte limit (it did not read its socket).
    public static let slowConsumer: UInt16 = 4004
    /// The session kept sending past its rate limit after being told to slow down.
    public static let rateLimited: UInt16 = 4005
    /// Try again later (RFC 6455 1013): too many connections are waiting to log in.
    public static let tryAgainLater: UInt16 = 1013

    /// The close code for a `closing` reason.
    public static func code(for reason: SignalErrorCode) -> UInt16 {
        switch reason {
        case .loggedOut: normal
        case .serverShutdown: goingAway
        case .tokenExpired: tokenExpired
        case .idleTimeout: idleTimeout
        case .loginTimeout: loginTimeout
        case .slowConsumer: slowConsumer
        case .rateLimited: rateLimited
        case .serverBusy: tryAgainLater
        default: 4000
        }
    }
}
