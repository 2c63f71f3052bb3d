import CallAPISignalProtocol
import Foundation

/// Why a send or request did not succeed.
public enum SignalClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered `failed`.
    case failed(SignalErrorCode, String)
    /// The server refused the request with an `error` frame.
    case refused(SignalErrorCode, String)
    /// ``SignalClient/login(token:)`` has not been called.
    case notLoggedIn
    /// The client stopped and will not reconnect by itself.
    case stopped(SignalStopReason)
    /// The connection dropped after the frame was written and before the server answered: it may or may not
    /// have been delivered.
    case connectionLost
    /// Too many sends are waiting for the connection to come back.
    case queueFull(Int)
    /// The request needs the connection, and the client is reconnecting: ask again once it is connected (a
    /// presence subscription is renewed by itself on reconnect).
    case notConnected
    /// The send waited this long for the connection to come back and was given up
    /// (``SignalClientConfiguration/sendQueueTimeoutMillis``).
    case noConnection(waitedMillis: Int64)
    /// The frame was written and the server did not answer within the time allowed.
    case noAnswer

    /// The server's reason, when it gave one.
    public var code: SignalErrorCode? {
        switch self {
        case .failed(let code, _), .refused(let code, _): code
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .failed(let code, let message): "not delivered (\(code.rawValue)): \(message)"
        case .refused(let code, let message): "refused (\(code.rawValue)): \(message)"
        case .notLoggedIn: "not logged in: call login(token:) first"
        case .stopped(let reason): "the signaling client stopped: \(reason)"
        case .connectionLost: "the connection dropped before the server answered; the message may not have arrived"
        case .queueFull(let limit): "\(limit) messages are already waiting for the connection to come back"
        case .notConnected: "not connected right now; ask again once connected"
        case .noConnection(let waited): "no connection to the server for \(waited / 1000) s"
        case .noAnswer: "no answer from the server"
        }
    }
}

/// Each case's fixed number: the code CallAPI reports with `onCallError(.sendMessageFail, .message, code, …)`
/// (docs/adapters.md, "Errors"). Without it the code would be the case's position, which changes when cases do.
extension SignalClientError: CustomNSError {
    public static var errorDomain: String { "CallAPISignalClient" }

    public var errorCode: Int {
        switch self {
        case .failed: 1
        case .refused: 2
        case .notLoggedIn: 3
        case .stopped: 4
        case .connectionLost: 5
        case .queueFull: 6
        case .notConnected: 7
        case .noConnection: 8
        case .noAnswer: 9
        }
    }

    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }
}

/// A successful send: delivered now, or held by the server for an offline user.
public enum SendOutcome: Sendable, Equatable {
    /// Handed to `sessions` online sessions of the user.
    case delivered(messageId: String, sessions: Int)
    /// The user is offline; the server holds the message for `ttl` seconds.
    case queued(messageId: String, ttl: Int)
}
