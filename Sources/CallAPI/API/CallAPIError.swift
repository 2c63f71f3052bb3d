/// Why CallAPI refused a request or could not complete it. The description says what was wrong.
public struct CallAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong; the numbers are stable (apps log and compare them).
    public enum Code: Int, Sendable {
        /// The action is not allowed in the current state.
        case stateMismatch = 1
        /// `initialize` has not been called.
        case notInitialized = 2
        /// An argument was invalid.
        case invalidArgument = 3
        /// The signaling channel could not send the message.
        case sendFailed = 4
        /// The API was deinitialized while the request was under way.
        case deinitialized = 5
        /// The prepare config's RTC token provider failed.
        case rtcTokenUnavailable = 6
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
