import CallAPISignalProtocol
import Logging
import PostgresNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The ledger in PostgreSQL (postgres-nio): one connection, the same schema and queries as SQLite.
package final class PostgresLedgerStore: LedgerStore {
    private let queries: SQLLedgerQueries<Runner>

    /// Connects to `url` (`postgres://user[:password]@host[:port]/database`, no TLS: meant for loopback or a
    /// private network) and migrates the database.
    package static func open(url: String, logger: Logger) async throws -> PostgresLedgerStore {
        let configuration = try configuration(url: url)
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        } catch {
            throw LedgerStoreError(
                "cannot connect to the ledger database at \(redacted(url)): \(String(reflecting: error))")
        }
        let store = PostgresLedgerStore(connection: connection, logger: logger)
        try await store.migrate()
        return store
    }

    /// Reads a `postgres://` URL.
    static func configuration(url: String) throws -> PostgresConnection.Configuration {
        guard let components = URLComponents(string: url),
            components.scheme == "postgres" || components.scheme == "postgresql",
            let host = components.host, !host.isEmpty, let user = components.user, !user.isEmpty
        else {
            throw LedgerStoreError(
                "the ledger database URL must look like postgres://user[:password]@host[:port]/database, "
                    + "not \(redacted(url))")
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        return PostgresConnection.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: database.isEmpty ? nil : database, tls: .disable)
    }

    /// `url` without its password, for messages.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? url
    }

    private init(connection: PostgresConnection, logger: Logger) {
        queries = SQLLedgerQueries(runner: Runner(connection: connection, logger: logger))
    }

    package func migrate() async throws {
        // Servers sharing a database may start together: one migrates at a time (a session-level advisory lock).
        _ = try await queries.runner.run("SELECT pg_advisory_lock(\(Self.migrationLock))", [])
        do {
            try await queries.migrate()
        } catch {
            _ = try? await queries.runner.run("SELECT pg_advisory_unlock(\(Self.migrationLock))", [])
            throw error
        }
        _ = try await queries.runner.run("SELECT pg_advisory_unlock(\(Self.migrationLock))", [])
    }

    /// The advisory lock key of migrations ("callapi" in ASCII, as a number).
    static let migrationLock: Int64 = 0x63_616C_6C61_7069
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
        let connection: PostgresConnection
        let logger: Logger

        static func placeholder(_ index: Int) -> String { "$\(index)" }

        func run(_ sql: String, _ binds: [SQLValue]) async throws -> [[String: SQLValue]] {
            var bindings = PostgresBindings()
            for bind in binds {
                switch bind {
                case .integer(let value): bindings.append(value)
                case .text(let value): bindings.append(value)
                case .null: bindings.appendNull()
                }
            }
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
            var result: [[String: SQLValue]] = []
            for try await row in rows {
                var values: [String: SQLValue] = [:]
                for cell in row {
                    if cell.bytes == nil {
                        values[cell.columnName] = .null
                    } else if [.int2, .int4, .int8].contains(cell.dataType) {
                        values[cell.columnName] = .integer(try cell.decode(Int64.self))
                    } else {
                        // Text columns; anything else (void from pg_advisory_lock) reads as null.
                        values[cell.columnName] = (try? cell.decode(String.self)).map(SQLValue.text) ?? .null
                    }
                }
                result.append(values)
            }
            return result
        }

        func transaction(_ body: @Sendable () async throws -> Void) async throws {
            _ = try await run("BEGIN", [])
            do {
                try await body()
                _ = try await run("COMMIT", [])
            } catch {
                _ = try? await run("ROLLBACK", [])
                throw error
            }
        }
    }
}
