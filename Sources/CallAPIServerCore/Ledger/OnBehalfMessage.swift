import CallAPIWire

/// A call message the server writes on a user's behalf, in the shape that user's own client would send it
/// (docs/spec/wire-format.md): the busy reject (``BusyAnswer``) and the cancels that end an abandoned ring
/// (``AbandonedRing``). They carry no reliability mark: the receiver acknowledges nothing and takes them as the
/// deployed clients' messages.
enum OnBehalfMessage {
    /// `action` of call `callId` from `user` (a CallAPI user id: decimal digits), with the members `rest` writes
    /// after the common ones; `nil` when `user` is not a CallAPI user id (the message could not carry a valid
    /// `fromUserId`).
    static func body(
        _ action: MessageAction, callId: String, from user: String, now: Int64,
        _ rest: (inout JSONObjectWriter<[UInt8]>) -> Void
    ) -> String? {
        guard let userId = UInt(user) else { return nil }
        // The members in the order the deployed clients write them (not sorted).
        typealias Key = CallMessageKey
        var message = JSONObjectWriter(into: [UInt8]())
        message.member(Key.messageAction.spelling, action.rawValue)
        message.member(Key.messageVersion.spelling, "1.0")
        message.member(Key.messageTimestamp.spelling, now)
        message.member(Key.fromUserId.spelling) { output in
            // In decimal as it is: a `UInt` may lie beyond the writer's `Int64`.
            var digits = String(userId)
            digits.withUTF8 { output.writeBytes(UnsafeRawBufferPointer($0)) }
        }
        message.member(Key.callId.spelling, callId)
        rest(&message)
        return String(decoding: message.finish(), as: UTF8.self)
    }
}
