import CallAPIServerTesting
import CallAPISignalProtocol
import Foundation
import Logging
import PostgresNIO
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The ledger's two databases. PostgreSQL is the one `.ci/run` starts (scripts/services/start-postgres.sh) and names
/// in `CALLAPI_TEST_POSTGRES_URL`; without it the PostgreSQL suites are disabled with that reason.
enum LedgerBackend: String, CustomStringConvertible, Sendable {
    case sqlite
    case postgres

    static let postgresURL = ProcessInfo.processInfo.environment["CALLAPI_TEST_POSTGRES_URL"]
    static let postgresMissing: Comment =
        "CALLAPI_TEST_POSTGRES_URL is not set (.ci/run starts PostgreSQL: scripts/services/start-postgres.sh)"

    var description: String { rawValue }

    /// The server setting for this database.
    var database: LedgerSettings.Database {
        switch self {
        case .sqlite: .memory
        case .postgres: .postgres(url: Self.postgresURL ?? "")
        }
    }

    /// A store of its own (SQLite in memory; PostgreSQL shared, so tests use users of their own), or with
    /// `fresh`, a new PostgreSQL database (for retention, which deletes every old call in its database).
    func openStore(fresh: Bool = false) async throws -> any LedgerStore {
        switch self {
        case .sqlite: try await SQLiteLedgerStore.open(path: nil)
        case .postgres:
            try await PostgresLedgerStore.open(
                url: fresh ? try await Self.freshPostgresURL() : Self.postgresURL ?? "",
                logger: Logger(label: "test.ledger"))
        }
    }

    /// The server setting for a database of its own (a new one for PostgreSQL).
    func freshDatabase() async throws -> LedgerSettings.Database {
        switch self {
        case .sqlite: .memory
        case .postgres: .postgres(url: try await Self.freshPostgresURL())
        }
    }

    /// Creates a new database on the test server and returns its URL.
    static func freshPostgresURL() async throws -> String { try await TestDatabase.freshPostgresURL() }
}

/// A user id no other test uses (PostgreSQL is shared between tests and runs): CallAPI ids are numbers.
func uniqueUser() -> String {
    String(UInt.random(in: 100_000_000...999_999_999))
}
