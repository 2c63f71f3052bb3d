import CallAPIServerCore
import CallAPISignalProtocol

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
