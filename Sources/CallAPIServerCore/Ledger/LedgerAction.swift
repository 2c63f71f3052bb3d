import CallAPISignalProtocol

/// What the ledger asks its shell to do, in order.
package enum LedgerAction: Sendable, Equatable {
    /// A call ended: save its record.
    case save(CallRecord)
    /// Tell the business server (call webhooks).
    case notify(CallEvent)
}

/// A moment in a call's life, for call webhooks.
public struct CallEvent: Sendable, Codable, Equatable {
    /// What happened.
    public enum Kind: String, Sendable, Codable, Equatable {
        case ringing, accepted, connected, ended, missed
    }
    public var kind: Kind
    public var callId: String
    public var caller: String
    public var callee: String
    /// When it happened (ms since 1970, server clock).
    public var at: Int64
    /// For `ended` and `missed`: how the call ended.
    public var outcome: CallOutcome?

    public init(kind: Kind, callId: String, caller: String, callee: String, at: Int64, outcome: CallOutcome?) {
        self.kind = kind
        self.callId = callId
        self.caller = caller
        self.callee = callee
        self.at = at
        self.outcome = outcome
    }
}
