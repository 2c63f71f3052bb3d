/// Why the server refused a frame, failed a send or closed a session.
///
/// The raw values are the `code` / `reason` strings on the wire. Unknown codes from a newer server decode
/// as ``unknown``.
public enum SignalErrorCode: String, Codable, Sendable, Equatable, CaseIterable {
    /// The text was not valid JSON.
    case malformedJSON = "malformed_json"
    /// The JSON was not a frame: no `type`, or a field missing or of the wrong type.
    case invalidFrame = "invalid_frame"
    /// The `type` is not one the server knows.
    case unknownType = "unknown_type"
    /// The frame was larger than the server's frame limit.
    case tooLarge = "too_large"
    /// Binary WebSocket messages are not part of the protocol.
    case binaryNotSupported = "binary_not_supported"
    /// The frame needs a logged-in session; send `login` first.
    case notLoggedIn = "not_logged_in"
    /// `login` on a session that is already logged in (use `renew` to change the token).
    case alreadyLoggedIn = "already_logged_in"
    /// The login frame had no token.
    case missingToken = "missing_token"
    /// The token is not one the server signed, is malformed, or is not a login token.
    case invalidToken = "invalid_token"
    /// The token has expired.
    case tokenExpired = "token_expired"
    /// A renewal token names a different user than the session's.
    case userMismatch = "user_mismatch"
    /// The user already has as many sessions as the server allows.
    case tooManySessions = "too_many_sessions"
    /// The session sent frames faster than the server allows.
    case rateLimited = "rate_limited"
    /// The target user id is not valid, or is the sender's own.
    case invalidTarget = "invalid_target"
    /// The target user is offline and the sender asked for no time-to-live.
    case peerOffline = "peer_offline"
    /// The target user is offline and already has as many held messages as the server keeps.
    case queueFull = "queue_full"
    /// The session did not log in within the server's login timeout.
    case loginTimeout = "login_timeout"
    /// Nothing arrived from the session within the server's idle timeout.
    case idleTimeout = "idle_timeout"
    /// The server is shutting down.
    case serverShutdown = "server_shutdown"
    /// The session logged out.
    case loggedOut = "logged_out"
    /// The session did not read its socket fast enough: its outbox passed the server's limit and it was closed;
    /// also the reason of a `failed` send or `held_result` for a message such a session never got.
    case slowConsumer = "slow_consumer"
    /// The server has as many connections waiting to log in as it allows; try again in a moment.
    case serverBusy = "server_busy"
    /// The invitation is not one this session may act on: unknown, already ended, or someone else's.
    case invitationNotFound = "invitation_not_found"
    /// The invitation was already accepted: it can no longer be cancelled, refused or accepted again.
    case invitationAlreadyAccepted = "invitation_already_accepted"
    /// The session or the callee already has as many pending invitations as the server allows.
    case tooManyInvitations = "too_many_invitations"
    /// The match queue holds as many waiting users as the server allows; try again later.
    case matchQueueFull = "match_queue_full"
    /// The server failed in a way that is not the client's fault.
    case internalError = "internal_error"
    /// A code this library does not know (sent by a newer server).
    case unknown = "unknown"

    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        self = SignalErrorCode(rawValue: raw) ?? .unknown
    }
}
