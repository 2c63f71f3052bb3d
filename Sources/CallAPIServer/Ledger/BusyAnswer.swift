import CallAPISignalProtocol
import CallAPIWire

/// The reject a busy callee's own client would send (docs/spec/wire-format.md: `rejectByInternal` 1 and the exact
/// reason text apps match on), written by the server on the callee's behalf.
enum BusyAnswer {
    /// The reason text the deployed clients send and apps match on.
    static let reason = "The user is currently busy"

    /// The reject for the call `callId` from `callee` (a CallAPI user id: decimal digits), or `nil` when `callee`
    /// is not one (the reject could not carry a valid `fromUserId`).
    static func body(callId: String, callee: String, now: Int64) -> String? {
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

extension CallLedger {
    /// Whether the server answers calls to busy users itself (``busyAnswer(to:now:)``): asked before anything
    /// else about a send, so that a server that does not (the default) pays nothing per relayed message.
    var answersBusy: Bool { settings.answersBusy }

    /// The busy reject to answer `send` with instead of relaying it, when the ledger answers busy and `send` is a
    /// call to a user in an accepted call with someone else; `nil` to relay it as usual.
    ///
    /// Whether the callee is busy is asked first: it is a table look-up, and the body is read only for a busy
    /// callee (the ledger reads every relayed body once more when it hears of the send).
    func busyAnswer(to send: RelayedSendRequest, now: Int64) -> String? {
        guard settings.answersBusy, let busyCallId = busyCall(of: send.to),
            let fields = CallMessageFields.parse(send.body), case .call = fields.action, busyCallId != fields.callId,
            !isCall(busyCallId, between: send.from, and: send.to)
        else { return nil }
        return BusyAnswer.body(callId: fields.callId, callee: send.to, now: now)
    }
}

/// A `send` about to be relayed: who to whom, and what.
struct RelayedSendRequest: Sendable {
    var from: String
    var to: String
    var body: MessageBody
}
