import CallAPIServer
import Foundation
import Logging
import PostgresNIO

/// PostgreSQL databases for tests: `.ci/run` starts a server (scripts/services/start-postgres.sh) and names it in
/// `CALLAPI_TEST_POSTGRES_URL`.
public enum TestDatabase {
    /// The server's URL, when one is named.
    public static let postgresURL = ProcessInfo.processInfo.environment["CALLAPI_TEST_POSTGRES_URL"]

    /// A new, empty database on that server (a cluster of nodes of its own, a ledger of its own); its URL.
    public static func freshPostgresURL() async throws -> String {
        let base = postgresURL ?? ""
        let name = "ledger_\(UInt.random(in: 100_000_000...999_999_999))"
        let logger = Logger(label: "test.database")
        let connection = try await PostgresConnection.connect(
            configuration: try PostgresLedgerStore.configuration(url: base), id: 1, logger: logger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        } catch {
            // Closed on every path: postgres-nio traps on a connection dropped open.
            try? await connection.close()
            throw error
        }
        try await connection.close()
        var components = URLComponents(string: base)
        components?.path = "/" + name
        return components?.string ?? base
    }

    /// The number the query `sql` (one row, one integer column) answers in the database at `url`.
    public static func count(_ sql: String, url: String) async throws -> Int64 {
        let logger = Logger(label: "test.database")
        let connection = try await PostgresConnection.connect(
            configuration: try PostgresLedgerStore.configuration(url: url), id: 1, logger: logger)
        do {
            var value: Int64 = 0
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                .decode(Int64.self)
            {
                value = row
            }
            try await connection.close()
            return value
        } catch {
            try? await connection.close()
            throw error
        }
    }
}
