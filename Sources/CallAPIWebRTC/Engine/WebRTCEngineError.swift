/// A failure inside a ``WebRTCEngine``; its ``Code`` is what the engine reports as
/// `RTCEngineEvent.error(code:message:)` or `joinFailed(channel:code:message:)`.
public struct WebRTCEngineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The engine's own error codes (transports report theirs as they are).
    public enum Code: Int, Sendable {
        /// The media pipeline could not be built or failed while running (a GStreamer error).
        case pipeline = 1001
        /// The offer/answer exchange with a peer failed.
        case negotiation = 1002
        /// GStreamer elements the engine needs are not installed.
        case missingElements = 1003
        /// The engine is in the channel already (as call or secondary channel).
        case alreadyInChannel = 1004
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code) (\(code.rawValue)): \(message)" }
}
