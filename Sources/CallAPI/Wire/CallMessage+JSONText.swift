/// A ``CallMessage`` as the JSON text of wire format 1.0: compact, keys sorted, exactly the text of
/// ``CallMessage/fields`` as a `JSONValue` (MessageCodingTests hold the two to it), but straight from the typed
/// fields, without building the dictionary or sorting its keys on every send.
extension CallMessage: JSONTextWritable {
    @usableFromInline
    package func write<Output: JSONOutput>(to output: inout Output) {
        typealias Key = CallMessageKey
        var members = JSONObjectWriter(into: output)
        // The keys in the order a `JSONValue` object's keys are sorted (byte order: "messageId" before the action).
        if action == .ack, let ackMessageId { members.member(Key.ackMessageId.spelling, ackMessageId) }
        if action == .cancelCall, let answeredByDevice {
            members.member(Key.answeredByDevice.spelling, answeredByDevice)
        }
        members.member(Key.callId.spelling, callId)
        if action == .cancelCall { members.member(Key.cancelCallByInternal.spelling, cancelCallByInternal ? 1 : 0) }
        if let deviceId { members.member(Key.deviceId.spelling, deviceId) }
        if action.isCall, let fromRoomId { members.member(Key.fromRoomId.spelling, fromRoomId) }
        if let fromUserExtension { members.member(Key.fromUserExtension.spelling, .object(fromUserExtension)) }
        members.member(Key.fromUserId.spelling, Int(fromUserId))
        if action == .hangup, let hangupReason { members.member(Key.hangupReason.spelling, hangupReason) }
        if action == .ack, let inCall { members.member(Key.inCall.spelling, inCall ? 1 : 0) }
        if let messageId { members.member(Key.messageId.spelling, messageId) }
        members.member(Key.messageAction.spelling, action.rawValue)
        members.member(Key.messageTimestamp.spelling, timestamp)
        members.member(Key.messageVersion.spelling, CallMessage.version)
        if action == .reject {
            members.member(Key.rejectByInternal.spelling, rejectByInternal ? 1 : 0)
            if let rejectReason { members.member(Key.rejectReason.spelling, rejectReason) }
        }
        if action == .cancelCall, let rejectedByDevice {
            members.member(Key.rejectedByDevice.spelling, rejectedByDevice)
        }
        if reliable { members.member(Key.reliability.spelling, 1) }
        if action.isCall, let remoteUserId { members.member(Key.remoteUserId.spelling, Int(remoteUserId)) }
        output = members.finish()
    }
}
