import CallAPISignalProtocol

/// Where ended calls are kept: SQLite (``SQLiteLedgerStore``) or PostgreSQL (``PostgresLedgerStore``), one schema
/// (``LedgerSchema``).
package protocol LedgerStore: Sendable {
    /// Brings the schema up to ``LedgerSchema/currentVersion`` (idempotent).
    func migrate() async throws
    /// Inserts or replaces these records (by `callId`).
    func save(_ records: [CallRecord]) async throws
    /// A page of a user's calls.
    func calls(_ query: CallQuery) async throws -> CallPage
    /// Deletes calls that ended before `cutoff`; returns how many.
    func deleteCalls(endedBefore cutoff: Int64) async throws -> Int
    /// The schema version the database is at (0: none yet).
    func schemaVersion() async throws -> Int
    /// Closes the connection; nothing may be called after.
    func close() async throws
}

/// A database error, with what was being done.
public struct LedgerStoreError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
