#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A call webhook event in the durable queue (the `webhook_events` table): its sequence number, idempotency key and
/// the exact body that is posted (and replayed), with its delivery state.
public struct StoredCallEvent: Sendable, Equatable {
    /// The sequence number the store gave it: one more per event stored, in the order the stores' transactions
    /// committed (across servers sharing the database).
    public var seq: Int64
    /// `<callId>:<event>`: the same for every attempt, before and after a restart (docs/webhooks.md).
    public var idempotencyKey: String
    public var callId: String
    public var kind: CallEvent.Kind
    /// The JSON body posted to the receiver.
    public var body: String
    /// When the ledger emitted it (ms since 1970, server clock).
    public var createdAt: Int64
    /// Failed delivery attempts so far.
    public var attempts: Int
    /// When the next attempt is due.
    public var nextAttemptAt: Int64
    /// When a receiver answered 2xx (`nil`: not yet).
    public var deliveredAt: Int64?
    /// Why the last attempt failed.
    public var lastError: String?

    public init(
        seq: Int64, idempotencyKey: String, callId: String, kind: CallEvent.Kind, body: String, createdAt: Int64,
        attempts: Int = 0, nextAttemptAt: Int64, deliveredAt: Int64? = nil, lastError: String? = nil
    ) {
        self.seq = seq
        self.idempotencyKey = idempotencyKey
        self.callId = callId
        self.kind = kind
        self.body = body
        self.createdAt = createdAt
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.deliveredAt = deliveredAt
        self.lastError = lastError
    }

    /// The event `event` as number `seq`, emitted at `now`.
    package init(_ event: CallEvent, seq: Int64, now: Int64) {
        let key = Self.idempotencyKey(callId: event.callId, kind: event.kind)
        self.init(
            seq: seq, idempotencyKey: key, callId: event.callId, kind: event.kind,
            body: Self.body(event, seq: seq, key: key), createdAt: now, nextAttemptAt: now)
    }

    /// The idempotency key of a call's event: one event of each kind per call.
    package static func idempotencyKey(callId: String, kind: CallEvent.Kind) -> String { "\(callId):\(kind.rawValue)" }

    /// The posted JSON (keys sorted, so the same event always has the same bytes and signature).
    static func body(_ event: CallEvent, seq: Int64, key: String) -> String {
        let payload = Payload(
            seq: seq, idempotencyKey: key, event: event.kind, callId: event.callId, caller: event.caller,
            callee: event.callee, at: event.at, outcome: event.outcome?.rawValue, endReason: event.endReason,
            endedBy: event.endedBy, serverEnded: event.serverEnded)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A struct of strings and numbers always encodes.
        return String(decoding: try! encoder.encode(payload), as: UTF8.self)
    }

    /// The body's fields (docs/webhooks.md).
    struct Payload: Codable, Equatable {
        var seq: Int64
        var idempotencyKey: String
        var event: CallEvent.Kind
        var callId: String
        var caller: String
        var callee: String
        var at: Int64
        /// For `ended` and `missed`.
        var outcome: String?
        /// For `ended` and `missed`: the record's `endReason`.
        var endReason: String?
        /// For `ended` and `missed`, when a user's message ended the call.
        var endedBy: String?
        /// For `ended` and `missed`, when the server ended the call and told both sides.
        var serverEnded: Bool?
    }
}
