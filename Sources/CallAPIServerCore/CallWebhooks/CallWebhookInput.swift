/// What ``CallWebhookMachine`` learns. The time comes with ``CallWebhookMachine/handle(_:now:)``.
package enum CallWebhookInput: Sendable, Equatable {
    /// The ledger saw a moment of a call.
    case emitted(CallEvent)
    /// The event is in the store: it may be posted.
    case stored(seq: Int64)
    /// The store could not take the event (after its retries): it is given up.
    case notStored(seq: Int64)
    /// The receiver answered 2xx.
    case delivered(seq: Int64)
    /// The attempt failed (no connection, a timeout, or a status other than 2xx); `jitter` (0...1) comes from the
    /// shell's random source and scales the retry delay.
    case failed(seq: Int64, problem: String, jitter: Double)
    /// Time passed: retries that are due start.
    case tick
}
