import Foundation

/// Why the Matrix signal client could not log in, sync or send.
public enum MatrixClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The homeserver answered with a status other than 200 (its `errcode` is in `body`).
    case http(status: UInt, body: String)
    /// Not logged in: the send was not attempted.
    case notLoggedIn
    /// `login` was called while logged in.
    case alreadyLoggedIn
    /// More sends wait for their turn than the configuration allows.
    case tooManyQueuedSends(Int)

    public var description: String {
        switch self {
        case .http(let status, let body): "the Matrix homeserver answered HTTP \(status): \(body.prefix(300))"
        case .notLoggedIn: "the Matrix client is not logged in"
        case .alreadyLoggedIn: "the Matrix client is already logged in; log out first"
        case .tooManyQueuedSends(let limit): "\(limit) Matrix sends already wait for their turn"
        }
    }

    /// A 401: the access token is unknown or expired.
    var isUnauthorized: Bool {
        if case .http(401, _) = self { return true }
        return false
    }
}

/// A fixed number for each case, or the homeserver's HTTP status: the code CallAPI reports with
/// `onCallError(.sendMessageFail, .message, code, …)` (docs/adapters.md, "Errors").
extension MatrixClientError: CustomNSError {
    public static var errorDomain: String { "CallAPIMatrix" }

    public var errorCode: Int {
        switch self {
        case .http(let status, _): Int(status)
        case .notLoggedIn: 1
        case .alreadyLoggedIn: 2
        case .tooManyQueuedSends: 3
        }
    }

    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }
}
