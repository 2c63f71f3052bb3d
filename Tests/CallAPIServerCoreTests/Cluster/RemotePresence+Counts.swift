@testable import CallAPIServerCore

extension RemotePresence {
    /// A view from (node, user, how many sessions) rows, the sessions numbered 1…n on each node: for tests that
    /// count sessions and do not address them.
    init(counts rows: [(node: String, user: String, sessions: Int)]) {
        self.init(rows: rows.map { ($0.node, $0.user, (0..<$0.sessions).map { SessionID(UInt64($0) + 1) }) })
    }
}
