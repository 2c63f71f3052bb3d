/// Why a push's payload could not be read as a ``SystemCallPush``.
public enum SystemCallPushError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The push has no ``SystemCallPush/payloadKey`` entry: not a CallAPI call push.
    case missingPayload
    /// The entry is not a JSON object.
    case malformed(String)
    /// A field is missing or wrong: its name and the problem.
    case invalidField(String, String)
    /// A payload version this library does not read.
    case unsupportedVersion(Int)

    public var description: String {
        switch self {
        case .missingPayload: "the push has no \"\(SystemCallPush.payloadKey)\" entry"
        case .malformed(let problem): "the push payload is malformed: \(problem)"
        case .invalidField(let field, let problem): "the push payload's \"\(field)\" is invalid: \(problem)"
        case .unsupportedVersion(let version):
            "the push payload has version \(version); this library reads version \(SystemCallPush.version)"
        }
    }
}
