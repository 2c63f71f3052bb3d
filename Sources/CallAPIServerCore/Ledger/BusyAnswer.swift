import CallAPIWire

/// The reject a busy callee's own client would send (docs/spec/wire-format.md: `rejectByInternal` 1 and the exact
/// reason text apps match on), written by the server on the callee's behalf.
package enum BusyAnswer {
    /// The reason text the deployed clients send and apps match on.
    package static let reason = "The user is currently busy"

    /// The reject for the call `callId` from `callee` (a CallAPI user id: decimal digits), or `nil` when `callee`
    /// is not one (the reject could not carry a valid `fromUserId`).
    package static func body(callId: String, callee: String, now: Int64) -> String? {
        guard let calleeId = UInt(callee) else { return nil }
        // The members in the order the deployed clients write them (not sorted); the callId is the only string not
        // a constant.
        typealias Key = CallMessageKey
        var reject = JSONObjectWriter(into: [UInt8]())
        reject.member(Key.messageAction.spelling, MessageAction.reject.rawValue)
        reject.member(Key.messageVersion.spelling, "1.0")
        reject.member(Key.messageTimestamp.spelling, now)
        reject.member(Key.fromUserId.spelling) { output in
            // In decimal as it is: a `UInt` may lie beyond the writer's `Int64`.
            var digits = String(calleeId)
            digits.withUTF8 { output.writeBytes(UnsafeRawBufferPointer($0)) }
        }
        reject.member(Key.callId.spelling, callId)
        reject.member(Key.rejectReason.spelling, reason)
        reject.member(Key.rejectByInternal.spelling, 1)
        return String(decoding: reject.finish(), as: UTF8.self)
    }
}
