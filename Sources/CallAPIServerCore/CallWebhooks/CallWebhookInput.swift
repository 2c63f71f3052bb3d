/// What ``CallWebhookMachine`` learns. The time comes with ``CallWebhookMachine/handle(_:now:)``.
package enum CallWebhookInput: Sendable, Equatable {
    /// The ledger saw a moment of a call.
    case emitted(CallEvent)
    /// The event is in the store, with the sequence number the store gave it: it may be posted.
    case stored(StoredCallEvent)
    /// The store could not take the event with this idempotency key (after its retries, or the key was used
    /// already): it is given up.
    case notStored(key: String)
    /// The receiver answered 2xx.
    case delivered(seq: Int64)
    /// The attempt failed (no connection, a timeout, or a status other than 2xx); `jitter` (0...1) comes from the
    /// shell's random source and scales the retry delay.
    case failed(seq: Int64, problem: String, jitter: Double)
    /// Undelivered events this server now posts (a cluster node's, found dead or gone): they join their calls'
    /// lines as a restart's events do, due at their next attempt time. Events already known are ignored.
    case adopted([StoredCallEvent])
    /// Time passed: retries that are due start.
    case tick
}
