import CallAPIServerCore
import CallAPISignalProtocol

/// The ledger's tables, the same for SQLite and PostgreSQL (docs/ledger.md). Each migration runs once, in order;
/// `schema_version` holds the versions applied.
enum LedgerSchema {
    /// The version ``migrations`` bring a database to.
    static var currentVersion: Int { migrations.count }

    /// Statements per version: index 0 takes a database from version 0 to 1, and so on. Never edit a shipped
    /// migration; append a new one.
    static let migrations: [[String]] = [
        [
            """
            CREATE TABLE calls (
                call_id TEXT PRIMARY KEY,
                caller TEXT NOT NULL,
                callee TEXT NOT NULL,
                media TEXT NOT NULL,
                room_id TEXT,
                started_at BIGINT NOT NULL,
                rang_at BIGINT,
                accepted_at BIGINT,
                connected_at BIGINT,
                ended_at BIGINT NOT NULL,
                ended_by TEXT,
                end_reason TEXT NOT NULL,
                outcome TEXT NOT NULL,
                duration_ms BIGINT NOT NULL,
                devices TEXT NOT NULL
            )
            """,
            "CREATE INDEX calls_by_caller ON calls (caller, started_at)",
            "CREATE INDEX calls_by_callee ON calls (callee, started_at)",
            "CREATE INDEX calls_by_end ON calls (ended_at)",
        ],
        // 2: the durable call webhook queue (docs/webhooks.md). Delivered events stay for replay until retention.
        [
            """
            CREATE TABLE webhook_events (
                seq BIGINT PRIMARY KEY,
                event_key TEXT NOT NULL,
                call_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                body TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                attempts INTEGER NOT NULL,
                next_attempt_at BIGINT NOT NULL,
                delivered_at BIGINT,
                last_error TEXT
            )
            """,
            "CREATE INDEX webhook_events_pending ON webhook_events (delivered_at, seq)",
            "CREATE INDEX webhook_events_by_creation ON webhook_events (created_at)",
        ],
        // 3: an idempotency key names one event, ever (an ended call's key was once reused for a later ending).
        // Where an earlier server stored a key twice, the first event stays.
        [
            "DELETE FROM webhook_events WHERE seq NOT IN (SELECT MIN(seq) FROM webhook_events GROUP BY event_key)",
            "CREATE UNIQUE INDEX webhook_events_by_key ON webhook_events (event_key)",
        ],
        // 4: the node of a cluster that posts an undelivered event (NULL: none; a single server posts them all).
        // A node takes over those of nodes found dead and of nodes that left (docs/scale-out.md).
        [
            "ALTER TABLE webhook_events ADD COLUMN node_id TEXT"
        ],
        // 5: what each device saw of a call, for the merged time line (docs/timeline.md). One row per call, user
        // and device: a device that reports again replaces its report.
        [
            """
            CREATE TABLE call_reports (
                call_id TEXT NOT NULL,
                user_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                body TEXT NOT NULL,
                PRIMARY KEY (call_id, user_id, device_id)
            )
            """,
            "CREATE INDEX call_reports_by_arrival ON call_reports (received_at)",
        ],
    ]

    static let createVersionTable = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"

    static let columns = [
        "call_id", "caller", "callee", "media", "room_id", "started_at", "rang_at", "accepted_at", "connected_at",
        "ended_at", "ended_by", "end_reason", "outcome", "duration_ms", "devices",
    ]

    static let webhookColumns = [
        "seq", "event_key", "call_id", "kind", "body", "created_at", "attempts", "next_attempt_at", "delivered_at",
        "last_error",
    ]
}
