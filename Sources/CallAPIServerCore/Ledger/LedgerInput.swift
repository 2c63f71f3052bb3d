import CallAPISignalProtocol

/// Something the ledger learns from the hub. The time comes with ``CallLedgerMachine/handle(_:now:)``.
package enum LedgerInput: Sendable, Equatable {
    /// The hub handled a user's `send` (a call message or anything else; the ledger reads only call messages).
    case relayed(RelayedSend)
    /// A session closed.
    case sessionClosed(SessionID)
    /// Time passed: end calls nobody answered and calls whose participants are all gone.
    case tick
    /// A call the server asked a client to place was never placed (docs/match.md): recorded `failed`.
    case notPlaced(NotPlacedCall)
    /// Calls in progress that another node of a cluster recorded, taken over when it died or left: their sessions
    /// are gone, so each ends by the usual rules (``LedgerLimits/livenessMillis``, the ring timeout) unless its
    /// participants are heard here again. Calls known here, or ended lately, are ignored.
    case adopted(AdoptedCalls)
}

/// A user's `send` and what the hub did with it.
public struct RelayedSend: Sendable, Equatable {
    public var from: String
    public var fromSession: SessionID
    public var to: String
    public var body: String {
        get { relayBody.text }
        set { relayBody = MessageBody(newValue) }
    }
    /// The body as the hub relayed it: kept escaped, its text built only if the ledger reads it.
    package var relayBody: MessageBody
    public var result: RelayResult

    public init(from: String, fromSession: SessionID, to: String, body: String, result: RelayResult) {
        self.init(from: from, fromSession: fromSession, to: to, relayBody: MessageBody(body), result: result)
    }

    package init(from: String, fromSession: SessionID, to: String, relayBody: MessageBody, result: RelayResult) {
        self.from = from
        self.fromSession = fromSession
        self.to = to
        self.relayBody = relayBody
        self.result = result
    }
}

/// What became of a relayed `send`.
public enum RelayResult: Sendable, Equatable {
    /// Written to these sessions of the receiver.
    case delivered([SessionID])
    /// Held for the offline receiver.
    case queued
    /// The receiver is offline and the message was not held.
    case offline
    /// Refused for another reason (the signaling error code's raw value).
    case failed(String)
    /// Not relayed: the server answered busy on the receiver's behalf (``CallLedgerMachine/busyCall(of:)``).
    case answeredBusy
}
