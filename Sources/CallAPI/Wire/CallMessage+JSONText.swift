/// A ``CallMessage`` as the JSON text of wire format 1.0: compact, keys sorted, exactly the text of
/// ``CallMessage/fields`` as a `JSONValue` (MessageCodingTests hold the two to it), but straight from the typed
/// fields, without building the dictionary or sorting its keys on every send.
extension CallMessage: JSONTextWritable {
    func write<Output: JSONTextOutput>(to writer: inout JSONTextWriter<Output>) {
        var members = Members(writer: writer)
        // The keys in the order a `JSONValue` object's keys are sorted (byte order: "messageId" < "message_action").
        if action == .ack, let ackMessageId { members.int("ackMessageId", ackMessageId) }
        if action == .cancelCall, let answeredByDevice { members.string("answeredByDevice", answeredByDevice) }
        members.string("callId", callId)
        if action == .cancelCall { members.int("cancelCallByInternal", cancelCallByInternal ? 1 : 0) }
        if let deviceId { members.string("deviceId", deviceId) }
        if action.isCall, let fromRoomId { members.string("fromRoomId", fromRoomId) }
        if let fromUserExtension { members.value("fromUserExtension", .object(fromUserExtension)) }
        members.int("fromUserId", Int(fromUserId))
        if action == .hangup, let hangupReason { members.string("hangupReason", hangupReason) }
        if action == .ack, let inCall { members.int("inCall", inCall ? 1 : 0) }
        if let messageId { members.int("messageId", messageId) }
        members.int("message_action", action.rawValue)
        members.int("message_timestamp", Int(timestamp))
        members.string("message_version", CallMessage.version)
        if action == .reject {
            members.int("rejectByInternal", rejectByInternal ? 1 : 0)
            if let rejectReason { members.string("rejectReason", rejectReason) }
        }
        if action == .cancelCall, let rejectedByDevice { members.string("rejectedByDevice", rejectedByDevice) }
        if reliable { members.int("reliability", 1) }
        if action.isCall, let remoteUserId { members.int("remoteUserId", Int(remoteUserId)) }
        writer = members.finish()
    }

    /// The object being written: `{`, then `"key":value` members separated by commas.
    private struct Members<Output: JSONTextOutput> {
        private var writer: JSONTextWriter<Output>
        private var empty = true

        init(writer: JSONTextWriter<Output>) {
            self.writer = writer
            self.writer.literal("{")
        }

        private mutating func key(_ key: StaticString) {
            if !empty { writer.literal(",") }
            empty = false
            writer.literal("\"")
            writer.literal(key)
            writer.literal("\":")
        }

        mutating func int(_ key: StaticString, _ value: Int) {
            self.key(key)
            writer.integer(value)
        }

        mutating func string(_ key: StaticString, _ value: String) {
            self.key(key)
            writer.quoted(value)
        }

        mutating func value(_ key: StaticString, _ value: JSONValue) {
            self.key(key)
            writer.value(value)
        }

        consuming func finish() -> JSONTextWriter<Output> {
            writer.literal("}")
            return writer
        }
    }
}
