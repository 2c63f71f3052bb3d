/// What ``CallWebhookMachine`` asks its shell to do, in order.
package enum CallWebhookAction: Sendable, Equatable {
    /// Write the new event to the queue table, numbered by the store (``EmittedCallEvent/numbered(_:)``), then
    /// report ``CallWebhookInput/stored(_:)`` or ``CallWebhookInput/notStored(key:)``.
    case store(EmittedCallEvent)
    /// The queue is full: the event is not kept. Log it (with its key) and count it.
    case refuse(CallEvent, reason: String)
    /// Post the event (`attempt` counts from 1), then report delivered or failed.
    case post(StoredCallEvent, attempt: Int)
    /// Mark the event delivered in the table (it stays for replay until retention).
    case markDelivered(seq: Int64, at: Int64)
    /// Record the failed attempt in the table, so a restarted server keeps the schedule.
    case recordFailure(seq: Int64, attempts: Int, retryAt: Int64, problem: String)
}
