import CallAPIServerCore

/// A value bound to, or read from, an SQL statement.
package enum SQLValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case null

    var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
    var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }
}

/// A database (SQLite's one connection, or a PostgreSQL pool) that runs a statement with positional parameters and
/// returns its rows by column name.
package protocol SQLRunner: Sendable {
    /// The `index`th (1-based) parameter's placeholder in this dialect.
    static func placeholder(_ index: Int) -> String
    func run(_ sql: String, _ binds: [SQLValue]) async throws -> [[String: SQLValue]]
    /// Runs `body` in one transaction.
    func transaction(_ body: @Sendable () async throws -> Void) async throws
    /// Inside a transaction: waits until no other server sharing the database is numbering call webhook events,
    /// and keeps the others waiting until this transaction ends.
    func lockWebhookNumbering() async throws
    /// Runs `body`, the schema migration, with no other server migrating the same database at the same time.
    func migrating(_ body: () async throws -> Void) async throws
    /// Closes the connection or the pool; nothing may be run after.
    func close() async throws
}
