/// Why a text could not be read as a frame: the `error` frame a server sends back for it.
public struct FrameDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `malformed_json`, `invalid_frame` or `unknown_type`.
    public var code: SignalErrorCode
    /// A sentence saying what was wrong.
    public var message: String
    /// The frame's request id, when it could be read.
    public var requestId: Int?
    /// The frame's `type`, when it could be read.
    public var type: String?

    public init(code: SignalErrorCode, message: String, requestId: Int? = nil, type: String? = nil) {
        self.code = code
        self.message = message
        self.requestId = requestId
        self.type = type
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
