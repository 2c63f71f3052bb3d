import CallAPISignalProtocol

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads the kind of a CallAPI message (wire format 1.0) to mark its send for the server's push logic: calls
/// (`message_action` 0 video, 10 audio) ring, cancels (1) withdraw. Everything else is not marked.
enum CallPushMarking {
    private struct Message: Decodable {
        var message_action: Int
        var callId: String?
        var cancelCallByInternal: Int?
        var fromUserExtension: [String: Extension]?
    }

    /// An extension value: only strings matter here (the caller's display name).
    private enum Extension: Decodable {
        case string(String)
        case other
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            self = (try? container.decode(String.self)).map(Extension.string) ?? .other
        }
    }

    /// The members of `Message`, in the order ``mark(forCallAPIMessage:)`` reads their values.
    private static let messageKeys: JSONKeys = [
        "message_action", "callId", "cancelCallByInternal", "fromUserExtension",
    ]

    /// The caller-name key of the user extension (`SystemCallPush.callerNameExtensionKey`).
    static let callerNameKey = "displayName"

    /// The mark for `message`, or nil when it is not a call or a cancel (or not a CallAPI message).
    ///
    /// Every message a user sends passes here, so it is read in one pass without Foundation; only what that reader
    /// is not sure of (arrays, deeper nesting, fractions…) takes `JSONDecoder`.
    static func mark(forCallAPIMessage message: String) -> PushMark? {
        // A CallAPI message is a JSON object: other traffic between users is never marked, and never decoded.
        let start = message.utf8.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        guard start == UInt8(ascii: "{") else { return nil }
        guard let values = FlatJSONObject.pick(messageKeys, from: message) else {
            return markDecoding(forCallAPIMessage: message)
        }
        // Read as `JSONDecoder` reads `Message`: a member of the wrong type makes the whole message unreadable.
        guard case .int(let wide)? = values[0], let action = Int(exactly: wide),
            let callId = values[1].optionalString, let cancelByTimer = values[2].optionalInt
        else { return nil }
        var callerName: String?
        switch values[3] {
        case nil, .null?: break
        case .object(let extensions)?:
            if case .string(let name)? = extensions[callerNameKey] { callerName = name }
        default: return nil
        }
        return mark(action: action, callId: callId, cancelByTimer: cancelByTimer, callerName: callerName)
    }

    /// ``mark(forCallAPIMessage:)`` through `JSONDecoder` alone: the general path, and the reference the one-pass
    /// reading is tested against.
    static func markDecoding(forCallAPIMessage message: String) -> PushMark? {
        guard let decoded = try? JSONDecoder().decode(Message.self, from: Data(message.utf8)) else { return nil }
        var name: String?
        if case .string(let text)? = decoded.fromUserExtension?[callerNameKey] { name = text }
        return mark(
            action: decoded.message_action, callId: decoded.callId, cancelByTimer: decoded.cancelCallByInternal,
            callerName: name)
    }

    private static func mark(action: Int, callId: String?, cancelByTimer: Int?, callerName: String?) -> PushMark? {
        guard let callId, !callId.isEmpty, callId.count <= PushMark.maxCallIdLength else { return nil }
        switch action {
        case 0, 10:
            let name = callerName.flatMap { $0.isEmpty ? nil : String($0.prefix(PushMark.maxCallerNameLength)) }
            return .call(callId: callId, callerName: name, video: action == 0)
        case 1:
            return .withdraw(callId: callId, reason: cancelByTimer == 1 ? .expired : .cancelled)
        default:
            return nil
        }
    }
}
