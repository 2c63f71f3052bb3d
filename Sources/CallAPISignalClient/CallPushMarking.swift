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

    /// The caller-name key of the user extension (`SystemCallPush.callerNameExtensionKey`).
    static let callerNameKey = "displayName"

    /// The mark for `message`, or nil when it is not a call or a cancel (or not a CallAPI message).
    static func mark(forCallAPIMessage message: String) -> PushMark? {
        guard let decoded = try? JSONDecoder().decode(Message.self, from: Data(message.utf8)),
            let callId = decoded.callId, !callId.isEmpty, callId.count <= PushMark.maxCallIdLength
        else { return nil }
        switch decoded.message_action {
        case 0, 10:
            var name: String?
            if case .string(let text)? = decoded.fromUserExtension?[callerNameKey], !text.isEmpty {
                name = String(text.prefix(PushMark.maxCallerNameLength))
            }
            return .call(callId: callId, callerName: name, video: decoded.message_action == 0)
        case 1:
            return .withdraw(callId: callId, reason: decoded.cancelCallByInternal == 1 ? .expired : .cancelled)
        default:
            return nil
        }
    }
}
