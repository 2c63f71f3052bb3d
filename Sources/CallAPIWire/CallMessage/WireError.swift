/// Why a received text is not a call message this endpoint acts on.
package enum WireError: Error, Sendable, Equatable, CustomStringConvertible {
    case notJSON
    case notAnObject
    case unsupportedVersion(String)
    case unknownAction(Int)
    case missingField(String)
    case invalidField(String)

    package var description: String {
        switch self {
        case .notJSON: "not valid JSON"
        case .notAnObject: "not a JSON object"
        case .unsupportedVersion(let v): "message_version \"\(v)\" is not 1.0"
        case .unknownAction(let a): "unknown message_action \(a)"
        case .missingField(let k): "missing \"\(k)\""
        case .invalidField(let k): "\"\(k)\" has the wrong type or value"
        }
    }
}
