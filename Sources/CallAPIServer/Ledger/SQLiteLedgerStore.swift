import CallAPISignalProtocol
import SQLiteNIO

/// The embedded ledger database (SQLite, vendored by sqlite-nio): a file, or memory for tests.
package final class SQLiteLedgerStore: LedgerStore {
    private let queries: SQLLedgerQueries<Runner>

    /// Opens (creating if needed) the database at `path`, or an in-memory one when `path` is `nil`, and migrates it.
    package static func open(path: String?) async throws -> SQLiteLedgerStore {
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: path.map { .file(path: $0) } ?? .memory)
        } catch {
            throw LedgerStoreError("cannot open the ledger database \(path ?? ":memory:"): \(error)")
        }
        let store = SQLiteLedgerStore(connection: connection)
        if path != nil {
            // Write-ahead logging: readers (history queries) do not wait for the writer.
            _ = try await store.queries.runner.run("PRAGMA journal_mode = WAL", [])
        }
        try await store.migrate()
        return store
    }

    private init(connection: SQLiteConnection) {
        queries = SQLLedgerQueries(runner: Runner(connection: connection))
    }

    package func migrate() async throws { try await queries.migrate() }
    package func save(_ records: [CallRecord]) async throws { try await queries.save(records) }
    package func calls(_ query: CallQuery) async throws -> CallPage { try await queries.calls(query) }
    package func deleteCalls(endedBefore cutoff: Int64) async throws -> Int {
        try await queries.deleteCalls(endedBefore: cutoff)
    }
    package func schemaVersion() async throws -> Int { try await queries.schemaVersion() }
    package func insertWebhookEvent(_ event: StoredCallEvent) async throws {
        try await queries.insertWebhookEvent(event)
    }
    package func pendingWebhookEvents() async throws -> [StoredCallEvent] {
        try await queries.pendingWebhookEvents()
    }
    package func lastWebhookSequence() async throws -> Int64 { try await queries.lastWebhookSequence() }
    package func markWebhookEventDelivered(seq: Int64, at: Int64) async throws {
        try await queries.markWebhookEventDelivered(seq: seq, at: at)
    }
    package func recordWebhookFailure(seq: Int64, attempts: Int, retryAt: Int64, problem: String) async throws {
        try await queries.recordWebhookFailure(seq: seq, attempts: attempts, retryAt: retryAt, problem: problem)
    }
    package func webhookEvents(since: Int64, limit: Int) async throws -> [StoredCallEvent] {
        try await queries.webhookEvents(since: since, limit: limit)
    }
    package func deleteWebhookEvents(deliveredAndCreatedBefore cutoff: Int64) async throws -> Int {
        try await queries.deleteWebhookEvents(deliveredAndCreatedBefore: cutoff)
    }
    package func close() async throws { try await queries.runner.connection.close() }

    struct Runner: SQLRunner {
        let connection: SQLiteConnection

        static func placeholder(_ index: Int) -> String { "?\(index)" }

        func run(_ sql: String, _ binds: [SQLValue]) async throws -> [[String: SQLValue]] {
            let data: [SQLiteData] = binds.map {
                switch $0 {
                case .integer(let value): .integer(Int(value))
                case .text(let value): .text(value)
                case .null: .null
                }
            }
            let rows = try await connection.query(sql, data)
            return rows.map { row in
                var values: [String: SQLValue] = [:]
                for column in row.columns {
                    switch column.data {
                    case .integer(let value): values[column.name] = .integer(Int64(value))
                    case .text(let value): values[column.name] = .text(value)
                    case .float(let value): values[column.name] = .integer(Int64(value))
                    case .blob, .null: values[column.name] = .null
                    }
                }
                return values
            }
        }

        func transaction(_ body: @Sendable () async throws -> Void) async throws {
            _ = try await connection.query("BEGIN", [])
            do {
                try await body()
                _ = try await connection.query("COMMIT", [])
            } catch {
                _ = try? await connection.query("ROLLBACK", [])
                throw error
            }
        }
    }
}
