import Foundation
import Logging
import Testing

@testable import CallAPIServer

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

    /// A store of its own (SQLite in memory; PostgreSQL shared, so tests use users of their own).
    func openStore() async throws -> any LedgerStore {
        switch self {
        case .sqlite: try await SQLiteLedgerStore.open(path: nil)
        case .postgres:
            try await PostgresLedgerStore.open(url: Self.postgresURL ?? "", logger: Logger(label: "test.ledger"))
        }
    }
}

/// A user id no other test uses (PostgreSQL is shared between tests and runs): CallAPI ids are numbers.
func uniqueUser() -> String {
    String(UInt.random(in: 100_000_000...999_999_999))
}
