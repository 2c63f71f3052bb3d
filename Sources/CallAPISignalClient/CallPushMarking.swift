import CallAPISignalProtocol
import CallAPIWire

/// Reads the kind of a CallAPI message (wire format 1.0) to mark its send for the server's push logic: calls (video
/// or audio) ring, cancels withdraw, accepts and rejects answer (withdrawing the pushes to the callee's other
/// devices). Everything else is not marked.
enum CallPushMarking {
    /// The mark for `message`, or nil when it is not a call or a cancel (or not a CallAPI message).
    ///
    /// Every message a user sends passes here, so only the message's head is read (``CallMessageHead``), in one pass
    /// without Foundation for the flat objects clients send.
    static func mark(forCallAPIMessage message: String) -> PushMark? {
        // A CallAPI message is a JSON object: other traffic between users is never marked, and never decoded.
        let start = message.utf8.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        guard start == UInt8(ascii: "{"), let head = try? CallMessageHead(message) else { return nil }
        return mark(head)
    }

    /// ``mark(forCallAPIMessage:)`` through the message's whole tree alone: the general path, and the reference the
    /// one-pass reading is tested against.
    static func markDecoding(forCallAPIMessage message: String) -> PushMark? {
        guard let head = try? CallMessageHead(readingTree: message) else { return nil }
        return mark(head)
    }

    private static func mark(_ head: CallMessageHead) -> PushMark? {
        guard let callId = head.callId, !callId.isEmpty, callId.count <= PushMark.maxCallIdLength else { return nil }
        switch head.action {
        case .videoCall, .audioCall:
            let name = head.callerName.flatMap { $0.isEmpty ? nil : String($0.prefix(PushMark.maxCallerNameLength)) }
            return .call(callId: callId, callerName: name, video: head.action == .videoCall)
        case .cancelCall:
            return .withdraw(callId: callId, reason: head.cancelCallByInternal == 1 ? .expired : .cancelled)
        case .accept, .reject:
            return .answer(callId: callId, accepted: head.action == .accept)
        case .hangup, .ack, .keepAlive:
            return nil
        }
    }
}
