import CallAPIServerCore
import CallAPISignalProtocol
import NIOConcurrencyHelpers

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The ledger store over SQL, written once over ``SQLRunner``: SQLite (``SQLiteLedgerStore``) and PostgreSQL
/// (``PostgresLedgerStore``) differ only in how they connect, bind and lock.
package struct SQLLedgerStore<Runner: SQLRunner>: LedgerStore {
    let runner: Runner
    /// The cluster node whose server this is, which posts the webhook events it stores (nil: a single server).
    let owner: String?
    /// The insert's text around its rows, and each row's placeholders by its place in a statement: written once
    /// here, so a save only joins them (building them per save was about 27,000 instructions per call).
    private let upsert: (head: String, rows: [String], tail: String)

    init(runner: Runner, owner: String? = nil) {
        self.runner = runner
        self.owner = owner
        let columns = LedgerSchema.columns
        let rows = (0..<Self.rowsPerStatement).map { row in
            let first = row * columns.count + 1
            return "(" + (first..<first + columns.count).map(Runner.placeholder).joined(separator: ", ") + ")"
        }
        upsert = (
            "INSERT INTO calls (\(columns.joined(separator: ", "))) VALUES ", rows,
            " ON CONFLICT (call_id) DO NOTHING"
        )
    }

    package func migrate() async throws {
        try await runner.migrating { try await migrateNow() }
    }

    package func close() async throws { try await runner.close() }

    private func migrateNow() async throws {
        _ = try await runner.run(LedgerSchema.createVersionTable, [])
        let current = try await schemaVersion()
        guard current <= LedgerSchema.currentVersion else {
            throw LedgerStoreError(
                "the ledger database is at schema version \(current), newer than this server's "
                    + "\(LedgerSchema.currentVersion); upgrade the server")
        }
        for version in current..<LedgerSchema.currentVersion {
            try await runner.transaction {
                for statement in LedgerSchema.migrations[version] {
                    _ = try await runner.run(statement, [])
                }
                _ = try await runner.run(
                    "INSERT INTO schema_version (version) VALUES (\(Runner.placeholder(1)))",
                    [.integer(Int64(version + 1))])
            }
        }
    }

    package func schemaVersion() async throws -> Int {
        let rows = try await runner.run("SELECT MAX(version) AS version FROM schema_version", [])
        return Int(rows.first?["version"]?.integer ?? 0)
    }

    /// Rows per `INSERT`: one statement per chunk is prepared once instead of once per row, and 64 rows of 15
    /// parameters stay far below both SQLite's and PostgreSQL's parameter limits.
    static var rowsPerStatement: Int { 64 }

    package func save(_ records: [CallRecord], events: [EmittedCallEvent]) async throws -> SavedCallEvents {
        // One row per call, its first record: a call that ended stays ended (and PostgreSQL refuses an insert that
        // touches one row twice in a statement).
        var seen = Set<String>()
        let rows = records.filter { seen.insert($0.callId).inserted }
        guard !rows.isEmpty || !events.isEmpty else { return SavedCallEvents() }
        var statements: [(sql: String, binds: [SQLValue])] = []
        for start in stride(from: 0, to: rows.count, by: Self.rowsPerStatement) {
            let chunk = rows[start..<min(start + Self.rowsPerStatement, rows.count)]
            var binds: [SQLValue] = []
            binds.reserveCapacity(chunk.count * LedgerSchema.columns.count)
            for record in chunk { binds += Self.binds(record, devices: DevicesColumn.text(record.devices)) }
            let sql = upsert.head + upsert.rows[0..<chunk.count].joined(separator: ", ") + upsert.tail
            statements.append((sql, binds))
        }
        let saved = NIOLockedValueBox(SavedCallEvents())
        try await runner.transaction { [statements, runner] in
            for statement in statements {
                _ = try await runner.run(statement.sql, statement.binds)
            }
            guard !events.isEmpty else { return }
            // Numbered under the lock, held to the commit: a number is visible only after every smaller one, so a
            // replay reader that has seen number n never sees a smaller one appear later.
            try await runner.lockWebhookNumbering()
            var last = try await self.lastWebhookSequence()
            for event in events {
                let numbered = event.numbered(last + 1)
                if try await runner.run(Self.insertEvent, Self.binds(numbered) + [owner.map(SQLValue.text) ?? .null])
                    .isEmpty
                {
                    saved.withLockedValue { $0.refused.append(event) }
                } else {
                    last += 1
                    saved.withLockedValue { $0.stored.append(numbered) }
                }
            }
        }
        return saved.withLockedValue { $0 }
    }

    private static func binds(_ record: CallRecord, devices: String) -> [SQLValue] {
        func optional(_ value: Int64?) -> SQLValue { value.map(SQLValue.integer) ?? .null }
        func optional(_ value: String?) -> SQLValue { value.map(SQLValue.text) ?? .null }
        return [
            .text(record.callId), .text(record.caller), .text(record.callee), .text(record.media.rawValue),
            optional(record.roomId), .integer(record.startedAt), optional(record.rangAt), optional(record.acceptedAt),
            optional(record.connectedAt), .integer(record.endedAt), optional(record.endedBy), .text(record.endReason),
            .text(record.outcome.rawValue), .integer(record.durationMillis), .text(devices),
        ]
    }

    package func calls(_ query: CallQuery) async throws -> CallPage {
        var binds: [SQLValue] = []
        func bind(_ value: SQLValue) -> String {
            binds.append(value)
            return Runner.placeholder(binds.count)
        }
        let user = bind(.text(query.userId))
        var conditions = [query.asCalleeOnly ? "callee = \(user)" : "(caller = \(user) OR callee = \(user))"]
        if !query.outcomes.isEmpty {
            let list = query.outcomes.map { bind(.text($0.rawValue)) }.joined(separator: ", ")
            conditions.append("outcome IN (\(list))")
        }
        if let since = query.since { conditions.append("started_at >= \(bind(.integer(since)))") }
        if let until = query.until { conditions.append("started_at < \(bind(.integer(until)))") }
        if let cursor = query.cursor {
            let at = bind(.integer(cursor.startedAt))
            let atAgain = bind(.integer(cursor.startedAt))
            let id = bind(.text(cursor.callId))
            conditions.append("(started_at < \(at) OR (started_at = \(atAgain) AND call_id < \(id)))")
        }
        let sql =
            "SELECT \(LedgerSchema.columns.joined(separator: ", ")) FROM calls WHERE "
            + conditions.joined(separator: " AND ")
            + " ORDER BY started_at DESC, call_id DESC LIMIT \(query.limit + 1)"
        let rows = try await runner.run(sql, binds)
        let records = try rows.prefix(query.limit).map(Self.record)
        let next =
            rows.count > query.limit ? records.last.map { CallCursor(startedAt: $0.startedAt, callId: $0.callId) } : nil
        return CallPage(calls: records, nextCursor: next)
    }

    package func call(callId: String) async throws -> CallRecord? {
        let rows = try await runner.run(
            "SELECT \(LedgerSchema.columns.joined(separator: ", ")) FROM calls WHERE call_id = \(Runner.placeholder(1))",
            [.text(callId)])
        return try rows.first.map(Self.record)
    }

    package func recentCalls(outcomes: [CallOutcome], limit: Int) async throws -> [CallRecord] {
        let filter =
            outcomes.isEmpty
            ? "" : "WHERE outcome IN (\((1...outcomes.count).map(Runner.placeholder).joined(separator: ", "))) "
        let rows = try await runner.run(
            "SELECT \(LedgerSchema.columns.joined(separator: ", ")) FROM calls \(filter)"
                + "ORDER BY started_at DESC, call_id DESC LIMIT \(max(1, min(limit, CallQuery.maxLimit)))",
            outcomes.map { .text($0.rawValue) })
        return try rows.map(Self.record)
    }

    package func webhookEvents(callId: String) async throws -> [StoredCallEvent] {
        try await runner.run(
            "SELECT \(LedgerSchema.webhookColumns.joined(separator: ", ")) FROM webhook_events "
                + "WHERE call_id = \(Runner.placeholder(1)) ORDER BY seq", [.text(callId)]
        ).map(Self.webhookEvent)
    }

    package func deleteCalls(endedBefore cutoff: Int64) async throws -> Int {
        let placeholder = Runner.placeholder(1)
        let rows = try await runner.run(
            "SELECT COUNT(*) AS n FROM calls WHERE ended_at < \(placeholder)", [.integer(cutoff)])
        _ = try await runner.run("DELETE FROM calls WHERE ended_at < \(placeholder)", [.integer(cutoff)])
        _ = try await runner.run("DELETE FROM call_reports WHERE received_at < \(placeholder)", [.integer(cutoff)])
        return Int(rows.first?["n"]?.integer ?? 0)
    }

    private static func record(_ row: [String: SQLValue]) throws -> CallRecord {
        func text(_ column: String) throws -> String {
            guard let value = row[column]?.text else { throw LedgerStoreError("calls.\(column) is not text") }
            return value
        }
        func integer(_ column: String) throws -> Int64 {
            guard let value = row[column]?.integer else { throw LedgerStoreError("calls.\(column) is not a number") }
            return value
        }
        let mediaText = try text("media")
        let outcomeText = try text("outcome")
        guard let media = CallMedia(rawValue: mediaText), let outcome = CallOutcome(rawValue: outcomeText) else {
            throw LedgerStoreError("calls row has media \(mediaText) / outcome \(outcomeText), unknown to this server")
        }
        let devices = try DevicesColumn.devices(try text("devices"))
        return CallRecord(
            callId: try text("call_id"), caller: try text("caller"), callee: try text("callee"), media: media,
            roomId: row["room_id"]?.text, startedAt: try integer("started_at"), rangAt: row["rang_at"]?.integer,
            acceptedAt: row["accepted_at"]?.integer, connectedAt: row["connected_at"]?.integer,
            endedAt: try integer("ended_at"), endedBy: row["ended_by"]?.text, endReason: try text("end_reason"),
            outcome: outcome, durationMillis: try integer("duration_ms"), devices: devices)
    }
}

// MARK: - Call webhook queue

extension SQLLedgerStore {
    /// Adds an event unless its idempotency key is used already (then no row comes back).
    static var insertEvent: String {
        let columns = LedgerSchema.webhookColumns + ["node_id"]
        let placeholders = (1...columns.count).map(Runner.placeholder).joined(separator: ", ")
        return "INSERT INTO webhook_events (\(columns.joined(separator: ", "))) VALUES (\(placeholders)) "
            + "ON CONFLICT (event_key) DO NOTHING RETURNING seq"
    }

    static func binds(_ event: StoredCallEvent) -> [SQLValue] {
        [
            .integer(event.seq), .text(event.idempotencyKey), .text(event.callId), .text(event.kind.rawValue),
            .text(event.body), .integer(event.createdAt), .integer(Int64(event.attempts)),
            .integer(event.nextAttemptAt), event.deliveredAt.map(SQLValue.integer) ?? .null,
            event.lastError.map(SQLValue.text) ?? .null,
        ]
    }

    package func pendingWebhookEvents() async throws -> [StoredCallEvent] {
        // A node of a cluster takes its own (from its previous run) and those of no node; a single server, all.
        guard let owner else {
            return try await runner.run(
                "SELECT \(LedgerSchema.webhookColumns.joined(separator: ", ")) FROM webhook_events "
                    + "WHERE delivered_at IS NULL ORDER BY seq", []
            ).map(Self.webhookEvent)
        }
        return try await claimWebhookEvents(leftBy: [owner])
    }

    package func claimWebhookEvents(leftBy nodes: [String]) async throws -> [StoredCallEvent] {
        guard let owner else { return [] }
        // One statement: each row is taken by one node, whichever updates it first.
        let others = nodes.indices.map { Runner.placeholder($0 + 2) }
        let from =
            others.isEmpty ? "node_id IS NULL" : "(node_id IS NULL OR node_id IN (\(others.joined(separator: ", "))))"
        let rows = try await runner.run(
            "UPDATE webhook_events SET node_id = \(Runner.placeholder(1)) WHERE delivered_at IS NULL AND \(from) "
                + "RETURNING \(LedgerSchema.webhookColumns.joined(separator: ", "))",
            [.text(owner)] + nodes.map(SQLValue.text))
        return try rows.map(Self.webhookEvent).sorted { $0.seq < $1.seq }
    }

    package func releaseWebhookEvents() async throws {
        guard let owner else { return }
        _ = try await runner.run(
            "UPDATE webhook_events SET node_id = NULL WHERE delivered_at IS NULL AND node_id = \(Runner.placeholder(1))",
            [.text(owner)])
    }

    package func lastWebhookSequence() async throws -> Int64 {
        try await runner.run("SELECT MAX(seq) AS seq FROM webhook_events", []).first?["seq"]?.integer ?? 0
    }

    package func markWebhookEventDelivered(seq: Int64, at: Int64) async throws {
        _ = try await runner.run(
            "UPDATE webhook_events SET delivered_at = \(Runner.placeholder(1)), last_error = NULL "
                + "WHERE seq = \(Runner.placeholder(2))", [.integer(at), .integer(seq)])
    }

    package func recordWebhookFailure(seq: Int64, attempts: Int, retryAt: Int64, problem: String) async throws {
        _ = try await runner.run(
            "UPDATE webhook_events SET attempts = \(Runner.placeholder(1)), next_attempt_at = \(Runner.placeholder(2)), "
                + "last_error = \(Runner.placeholder(3)) WHERE seq = \(Runner.placeholder(4))",
            [.integer(Int64(attempts)), .integer(retryAt), .text(String(problem.prefix(500))), .integer(seq)])
    }

    package func webhookEvents(since: Int64, limit: Int) async throws -> [StoredCallEvent] {
        try await runner.run(
            "SELECT \(LedgerSchema.webhookColumns.joined(separator: ", ")) FROM webhook_events "
                + "WHERE seq > \(Runner.placeholder(1)) ORDER BY seq LIMIT \(max(1, limit))", [.integer(since)]
        ).map(Self.webhookEvent)
    }

    package func deleteWebhookEvents(deliveredAndCreatedBefore cutoff: Int64) async throws -> Int {
        let condition =
            "delivered_at IS NOT NULL AND created_at < \(Runner.placeholder(1)) "
            + "AND seq < (SELECT MAX(seq) FROM webhook_events)"
        let rows = try await runner.run(
            "SELECT COUNT(*) AS n FROM webhook_events WHERE \(condition)", [.integer(cutoff)])
        _ = try await runner.run("DELETE FROM webhook_events WHERE \(condition)", [.integer(cutoff)])
        return Int(rows.first?["n"]?.integer ?? 0)
    }

    private static func webhookEvent(_ row: [String: SQLValue]) throws -> StoredCallEvent {
        func text(_ column: String) throws -> String {
            guard let value = row[column]?.text else { throw LedgerStoreError("webhook_events.\(column) is not text") }
            return value
        }
        func integer(_ column: String) throws -> Int64 {
            guard let value = row[column]?.integer else {
                throw LedgerStoreError("webhook_events.\(column) is not a number")
            }
            return value
        }
        let kindText = try text("kind")
        guard let kind = CallEvent.Kind(rawValue: kindText) else {
            throw LedgerStoreError("webhook_events row has kind \(kindText), unknown to this server")
        }
        return StoredCallEvent(
            seq: try integer("seq"), idempotencyKey: try text("event_key"), callId: try text("call_id"), kind: kind,
            body: try text("body"), createdAt: try integer("created_at"), attempts: Int(try integer("attempts")),
            nextAttemptAt: try integer("next_attempt_at"), deliveredAt: row["delivered_at"]?.integer,
            lastError: row["last_error"]?.text)
    }
}
