import CallAPISignalProtocol

/// What the ledger asks its shell to do, in order.
package enum LedgerAction: Sendable, Equatable {
    /// A call ended: save its record.
    case save(CallRecord)
    /// Tell the business server (call webhooks).
    case notify(CallEvent)
    /// Tell both sides of a ringing call nobody spoke of for the ring window that it ended (before its record).
    case endRing(AbandonedRing)
    /// In a cluster: none of the call's participants has had a session on this node for the hand-off time, so this
    /// node no longer hears them. It forgot the call; release it for a node that has one to take over.
    case handOff(LiveCallSnapshot)
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
    /// For `ended` and `missed`: why, as the record's `endReason` says (docs/ledger.md).
    public var endReason: String?
    /// For `ended` and `missed`: the user whose message ended the call, when one did.
    public var endedBy: String?
    /// For `ended` and `missed`: true when the server itself ended the call and told both sides (a ring nobody
    /// spoke of for the ring window); `nil` otherwise.
    public var serverEnded: Bool?

    public init(
        kind: Kind, callId: String, caller: String, callee: String, at: Int64, outcome: CallOutcome?,
        endReason: String? = nil, endedBy: String? = nil, serverEnded: Bool? = nil
    ) {
        self.kind = kind
        self.callId = callId
        self.caller = caller
        self.callee = callee
        self.at = at
        self.outcome = outcome
        self.endReason = endReason
        self.endedBy = endedBy
        self.serverEnded = serverEnded
    }
}
