import CallAPISignalProtocol

/// Bounds and windows of ``CallLedgerMachine``.
package struct LedgerLimits: Sendable, Equatable {
    /// Calls in progress kept in memory; a new call over the limit ends the oldest (`failed`, `ledgerFull`).
    package var maxLiveCalls: Int = 10_000
    /// A ringing call with no message for this long ends as missed (`noAnswer`): the clients' own ring timers
    /// (default 15 s) normally end it first with a cancel.
    package var ringTimeoutMillis: Int64 = 120_000
    /// How long after the last participant's session closed a call is ended as `dropped` (a reconnecting client
    /// that sends anything for the call within this window keeps it alive).
    package var livenessMillis: Int64 = 30_000
    /// How long an ended call's id is remembered, so that a late or replayed message with it does not start the
    /// call again (``EndedCalls``); at most ``maxEndedCalls`` ids (about 100 bytes each).
    package var rememberEndedMillis: Int64 = 3_600_000
    package var maxEndedCalls: Int = 100_000
    /// In a cluster: how long a call may have no session of its participants on this node (they reconnected to
    /// other nodes, whose messages this node no longer hears) before it is handed to a node that has one; `nil` on a
    /// single server, where there is none.
    package var handOffMillis: Int64? = nil

    package init(
        maxLiveCalls: Int = 10_000, ringTimeoutMillis: Int64 = 120_000, livenessMillis: Int64 = 30_000,
        rememberEndedMillis: Int64 = 3_600_000, maxEndedCalls: Int = 100_000, handOffMillis: Int64? = nil
    ) {
        self.handOffMillis = handOffMillis
        self.maxLiveCalls = maxLiveCalls
        self.ringTimeoutMillis = ringTimeoutMillis
        self.livenessMillis = livenessMillis
        self.rememberEndedMillis = rememberEndedMillis
        self.maxEndedCalls = maxEndedCalls
    }
}
