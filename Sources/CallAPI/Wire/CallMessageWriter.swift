/// Writes a ``CallMessage`` as the JSON text of wire format 1.0: compact, keys sorted, exactly the text
/// `JSONWriter` makes of ``CallMessage/fields`` (WireFormatTests hold the two to it), but straight from the
/// typed fields into one buffer, without building the dictionary or sorting its keys on every send.
enum CallMessageWriter {
    static func write(_ message: CallMessage) -> String {
        var writer = Writer()
        // The keys in the order JSONWriter sorts them (byte order: "messageId" < "message_action").
        let action = message.action
        if action == .ack, let ackMessageId = message.ackMessageId { writer.int("ackMessageId", ackMessageId) }
        if action == .cancelCall, let device = message.answeredByDevice { writer.string("answeredByDevice", device) }
        writer.string("callId", message.callId)
        if action == .cancelCall { writer.int("cancelCallByInternal", message.cancelCallByInternal ? 1 : 0) }
        if let deviceId = message.deviceId { writer.string("deviceId", deviceId) }
        if action.isCall, let room = message.fromRoomId { writer.string("fromRoomId", room) }
        if let ext = message.fromUserExtension { writer.value("fromUserExtension", .object(ext)) }
        writer.int("fromUserId", Int(message.fromUserId))
        if action == .hangup, let reason = message.hangupReason { writer.string("hangupReason", reason) }
        if action == .ack, let inCall = message.inCall { writer.int("inCall", inCall ? 1 : 0) }
        if let messageId = message.messageId { writer.int("messageId", messageId) }
        writer.int("message_action", action.rawValue)
        writer.int("message_timestamp", Int(message.timestamp))
        writer.string("message_version", CallMessage.version)
        if action == .reject {
            writer.int("rejectByInternal", message.rejectByInternal ? 1 : 0)
            if let reason = message.rejectReason { writer.string("rejectReason", reason) }
        }
        if action == .cancelCall, let device = message.rejectedByDevice { writer.string("rejectedByDevice", device) }
        if message.reliable { writer.int("reliability", 1) }
        if action.isCall, let remoteUserId = message.remoteUserId { writer.int("remoteUserId", Int(remoteUserId)) }
        return writer.finish()
    }

    /// The object being written: `{`, then `"key":value` members separated by commas.
    private struct Writer {
        // A call message without a user extension fits: the text grows once at most, not once per member.
        private var out: String
        private var empty = true

        init() {
            out = ""
            out.reserveCapacity(320)
            out += "{"
        }

        // Keys are string literals: appending them allocates nothing.
        private mutating func key(_ key: String) {
            if !empty { out += "," }
            empty = false
            out += "\""
            out += key
            out += "\":"
        }

        mutating func int(_ key: String, _ value: Int) {
            self.key(key)
            out += String(value)
        }

        mutating func string(_ key: String, _ value: String) {
            self.key(key)
            JSONWriter.writeString(value, to: &out)
        }

        mutating func value(_ key: String, _ value: JSONValue) {
            self.key(key)
            JSONWriter.write(value, to: &out)
        }

        mutating func finish() -> String {
            out += "}"
            return out
        }
    }
}
