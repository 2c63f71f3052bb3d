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

    package init(
        maxLiveCalls: Int = 10_000, ringTimeoutMillis: Int64 = 120_000, livenessMillis: Int64 = 30_000,
        rememberEndedMillis: Int64 = 3_600_000, maxEndedCalls: Int = 100_000
    ) {
        self.maxLiveCalls = maxLiveCalls
        self.ringTimeoutMillis = ringTimeoutMillis
        self.livenessMillis = livenessMillis
        self.rememberEndedMillis = rememberEndedMillis
        self.maxEndedCalls = maxEndedCalls
    }
}
