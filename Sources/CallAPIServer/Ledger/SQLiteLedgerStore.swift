import CallAPIServerCore
import CallAPISignalProtocol
import SQLiteNIO

/// The embedded ledger database (SQLite, vendored by sqlite-nio): a file, or memory for tests.
package enum SQLiteLedgerStore {
    /// Opens (creating if needed) the database at `path`, or an in-memory one when `path` is `nil`, and migrates it.
    package static func open(path: String?, owner: String? = nil) async throws -> SQLLedgerStore<Runner> {
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: path.map { .file(path: $0) } ?? .memory)
        } catch {
            throw LedgerStoreError("cannot open the ledger database \(path ?? ":memory:"): \(error)")
        }
        let store = SQLLedgerStore(runner: Runner(connection: connection), owner: owner)
        do {
            if path != nil {
                // Write-ahead logging: readers (history queries) do not wait for the writer.
                _ = try await store.runner.run("PRAGMA journal_mode = WAL", [])
            }
            try await store.migrate()
        } catch {
            // A connection left open traps when it is deinitialized (a newer schema crashed the server this way).
            try? await connection.close()
            throw error
        }
        return store
    }

    /// SQLite's statements: `?N` placeholders; one connection, so migrations never overlap.
    package struct Runner: SQLRunner {
        let connection: SQLiteConnection

        package static func placeholder(_ index: Int) -> String { "?\(index)" }

        package func run(_ sql: String, _ binds: [SQLValue]) async throws -> [[String: SQLValue]] {
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

        package func transaction(_ body: @Sendable () async throws -> Void) async throws {
            _ = try await connection.query("BEGIN", [])
            do {
                try await body()
                _ = try await connection.query("COMMIT", [])
            } catch {
                _ = try? await connection.query("ROLLBACK", [])
                throw error
            }
        }

        package func migrating(_ body: () async throws -> Void) async throws { try await body() }

        /// A SQLite file has one server, whose writer runs one transaction at a time.
        package func lockWebhookNumbering() async throws {}

        package func close() async throws { try await connection.close() }
    }
}
