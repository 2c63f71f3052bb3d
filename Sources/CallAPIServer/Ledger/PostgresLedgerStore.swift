import CallAPIServerCore
import CallAPISignalProtocol
import Logging
import PostgresNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The ledger in PostgreSQL (postgres-nio): a small pool that reconnects, the same schema and queries as SQLite.
package enum PostgresLedgerStore {
    /// Connects to `url` (`postgres://user[:password]@host[:port]/database`, no TLS: meant for loopback or a
    /// private network) and migrates the database.
    package static func open(url: String, owner: String? = nil, logger: Logger) async throws -> SQLLedgerStore<Runner> {
        let configuration = try configuration(url: url)
        // A pool, not one connection: a connection closed by a restart of PostgreSQL is replaced, so the ledger's
        // writes wait out the restart instead of failing until the server is restarted too (ClusterCallFaultTests
        // recorded 33 of 133 calls after one restart with a single connection).
        var options = PostgresClient.Configuration(
            host: configuration.host ?? "127.0.0.1", port: configuration.port ?? 5432,
            username: configuration.username, password: configuration.password, database: configuration.database,
            tls: .disable)
        options.options.maximumConnections = 4
        options.options.minimumConnections = 1
        options.options.connectTimeout = .seconds(5)
        let client = PostgresClient(configuration: options, backgroundLogger: logger)
        let pool = Task.detached { await client.run() }
        let runner = Runner(client: client, pool: pool, logger: logger)
        do {
            // Fails fast with a clear error when the database cannot be reached at start.
            try await client.withConnection { _ in }
        } catch {
            try? await runner.close()
            throw LedgerStoreError(
                "cannot connect to the ledger database at \(redacted(url)): \(String(reflecting: error))")
        }
        let store = SQLLedgerStore(runner: runner, owner: owner)
        do {
            try await store.migrate()
        } catch {
            try? await runner.close()
            throw error
        }
        return store
    }

    /// Reads a `postgres://` URL.
    package static func configuration(url: String) throws -> PostgresConnection.Configuration {
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

    /// The advisory lock key of migrations ("callapi" in ASCII, as a number).
    static let migrationLock: Int64 = 0x63_616C_6C61_7069

    /// The advisory lock key under which servers sharing a database number call webhook events ("cwhseq" in ASCII).
    static let webhookNumberingLock: Int64 = 0x63_7768_7365_71

    /// PostgreSQL's statements: `$N` placeholders; servers sharing a database migrate one at a time. Each statement
    /// runs on a connection leased from the pool, except inside ``transaction(_:)`` and ``migrating(_:)``, whose
    /// statements all run on the one connection they leased (a task-local carries it).
    package struct Runner: SQLRunner {
        let client: PostgresClient
        let pool: Task<Void, Never>
        let logger: Logger

        /// The connection a transaction or a migration holds, for the statements run inside it.
        @TaskLocal static var held: PostgresConnection?

        package static func placeholder(_ index: Int) -> String { "$\(index)" }

        package func run(_ sql: String, _ binds: [SQLValue]) async throws -> [[String: SQLValue]] {
            if let connection = Self.held { return try await run(sql, binds, on: connection) }
            return try await client.withConnection { try await run(sql, binds, on: $0) }
        }

        private func run(
            _ sql: String, _ binds: [SQLValue], on connection: PostgresConnection
        ) async throws -> [[String: SQLValue]] {
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

        /// Runs `body` with every statement on one leased connection.
        private func holding(_ body: () async throws -> Void) async throws {
            if Self.held != nil { return try await body() }
            try await client.withConnection { connection in
                try await Self.$held.withValue(connection) { try await body() }
            }
        }

        package func transaction(_ body: @Sendable () async throws -> Void) async throws {
            try await holding {
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

        package func lockWebhookNumbering() async throws {
            // Transaction-level: released by the commit or the rollback.
            _ = try await run("SELECT pg_advisory_xact_lock(\(PostgresLedgerStore.webhookNumberingLock))", [])
        }

        package func migrating(_ body: () async throws -> Void) async throws {
            // Servers sharing a database may start together: one migrates at a time (a session-level advisory lock,
            // taken and released on the same connection).
            try await holding {
                _ = try await run("SELECT pg_advisory_lock(\(PostgresLedgerStore.migrationLock))", [])
                do {
                    try await body()
                } catch {
                    _ = try? await run("SELECT pg_advisory_unlock(\(PostgresLedgerStore.migrationLock))", [])
                    throw error
                }
                _ = try await run("SELECT pg_advisory_unlock(\(PostgresLedgerStore.migrationLock))", [])
            }
        }

        package func close() async throws {
            pool.cancel()
            await pool.value
        }
    }
}
