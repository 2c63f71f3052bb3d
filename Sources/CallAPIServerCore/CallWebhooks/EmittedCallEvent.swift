/// A call event the ledger emitted, on its way to the webhook queue table: the store gives it its sequence number
/// (``StoredCallEvent/init(_:seq:now:)``) in the transaction that writes it.
package struct EmittedCallEvent: Sendable, Equatable {
    package var event: CallEvent
    /// When the ledger emitted it (ms since 1970, server clock): the stored event's creation time.
    package var emittedAt: Int64

    package init(_ event: CallEvent, emittedAt: Int64) {
        self.event = event
        self.emittedAt = emittedAt
    }

    /// `<callId>:<event>`, as the stored event will carry it.
    package var idempotencyKey: String { StoredCallEvent.idempotencyKey(callId: event.callId, kind: event.kind) }

    /// The event as the store's number `seq`.
    package func numbered(_ seq: Int64) -> StoredCallEvent { StoredCallEvent(event, seq: seq, now: emittedAt) }
}
