import CallAPISignalProtocol

/// Where the client's connection to the signaling server stands.
public enum SignalConnectionState: Sendable, Equatable, CustomStringConvertible {
    /// Not logged in.
    case idle
    /// Opening the socket and logging in; `attempt` counts failed tries since the last connection.
    case connecting(attempt: Int)
    /// Logged in: messages flow.
    case connected(userId: String, sessionId: String)
    /// The connection dropped; the client tries again after `delayMillis` (backoff with jitter).
    case reconnecting(attempt: Int, delayMillis: Int64, cause: String)
    /// The client gave up and will not reconnect by itself.
    case stopped(SignalStopReason)

    public var description: String {
        switch self {
        case .idle: "idle"
        case .connecting(let attempt): attempt == 0 ? "connecting" : "connecting (attempt \(attempt + 1))"
        case .connected(let userId, let sessionId): "connected as \(userId) (\(sessionId))"
        case .reconnecting(let attempt, let delay, let cause):
            "reconnecting in \(delay) ms (attempt \(attempt + 1)): \(cause)"
        case .stopped(let reason): "stopped: \(reason)"
        }
    }

    /// Whether messages can be sent now.
    public var isConnected: Bool {
        if case .connected = self { true } else { false }
    }
}

/// Why the client stopped.
public enum SignalStopReason: Sendable, Equatable, CustomStringConvertible {
    /// ``SignalClient/logout()`` was called.
    case loggedOut
    /// The server closed the session because its token expired; log in with a new token.
    case tokenExpired
    /// The server refused the login.
    case loginRefused(SignalErrorCode, String)
    /// The first login did not complete in time.
    case loginTimedOut

    public var description: String {
        switch self {
        case .loggedOut: "logged out"
        case .tokenExpired: "the token expired"
        case .loginRefused(let code, let message): "login refused (\(code.rawValue)): \(message)"
        case .loginTimedOut: "the login timed out"
        }
    }
}
