import CallAPIServerCore
/// The call ledger (docs/ledger.md): on by default; where it keeps calls, for how long, and whether the server
/// answers busy for users in a call.
public struct LedgerSettings: Sendable, Equatable {
    /// Where the ledger keeps ended calls.
    public enum Database: Sendable, Equatable {
        /// An SQLite file (created if missing).
        case sqlite(path: String)
        /// SQLite in memory: gone when the server stops (tests, and servers that only want busy/dropped).
        case memory
        /// PostgreSQL at `postgres://user[:password]@host[:port]/database`.
        case postgres(url: String)
    }

    /// Whether the server keeps a ledger at all.
    public var enabled = true
    public var database: Database = .memory
    /// Calls that ended more than this many days ago are deleted (checked hourly); `nil` keeps them forever.
    public var retentionDays: Int? = 90
    /// Answer a call to a user who is in an accepted call (by the ledger) with a busy reject on the user's behalf,
    /// without relaying it.
    public var answersBusy = false
    /// Seconds after the last participant's session closed that a call is ended as `dropped`.
    public var livenessSeconds = 30
    /// Seconds a ringing call may go without any message before it is ended as missed (`noAnswer`).
    public var ringTimeoutSeconds = 120
    /// Calls in progress kept in memory.
    public var maxLiveCalls = 10_000
    /// Ended calls waiting to be written, at most; over it a record is logged and counted as lost.
    public var writeQueueLimit = 10_000
    /// Durable call webhooks (docs/webhooks.md); `nil`: none. Their queue lives in the ledger's database.
    public var webhook: CallWebhookSettings?

    public init() {}

    var limits: LedgerLimits {
        LedgerLimits(
            maxLiveCalls: maxLiveCalls, ringTimeoutMillis: Int64(ringTimeoutSeconds) * 1000,
            livenessMillis: Int64(livenessSeconds) * 1000)
    }
}
