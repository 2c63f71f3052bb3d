/// Who is online on the other nodes of a cluster, nested in ``Presence``: for each user, the nodes that hold at least
/// one of its logged-in sessions and how many. It is a copy of the cluster's session rows (docs/scale-out.md), replaced
/// whole each time the node reads them, never edited session by session.
package struct RemotePresence: Sendable, Equatable {
    /// A user's sessions on one other node.
    package struct NodeSessions: Sendable, Equatable {
        package var node: String
        /// The sessions' ids, as that node numbers them, in order.
        package var ids: [SessionID]
        /// The push devices the sessions named at login, by session id (a session that named none is absent).
        package var devices: [SessionID: String]
        package var sessions: Int { ids.count }

        package init(node: String, ids: [SessionID], devices: [SessionID: String] = [:]) {
            self.node = node
            self.ids = ids
            self.devices = devices
        }
    }

    /// The other nodes with sessions of each user, in node id order (a user with none is absent).
    private var byUser: [String: [NodeSessions]] = [:]

    package init() {}

    /// Builds the view from rows of (node, user, the session ids), in any order, none naming a device; rows with no
    /// session are left out.
    package init(rows: [(node: String, user: String, sessions: [SessionID])]) {
        self.init(
            sessions: rows.flatMap { row in row.sessions.map { (row.node, SessionRow(session: $0, userId: row.user)) } }
        )
    }

    /// Builds the view from the other nodes' session rows, in any order.
    package init(sessions rows: [(node: String, row: SessionRow)]) {
        var grouped: [String: [String: NodeSessions]] = [:]
        for (node, row) in rows {
            var entry = grouped[row.userId]?[node] ?? NodeSessions(node: node, ids: [])
            entry.ids.append(row.session)
            if let device = row.device { entry.devices[row.session] = device }
            grouped[row.userId, default: [:]][node] = entry
        }
        for (user, nodes) in grouped {
            byUser[user] = nodes.values.map { NodeSessions(node: $0.node, ids: $0.ids.sorted(), devices: $0.devices) }
                .sorted { $0.node < $1.node }
        }
    }

    /// The other nodes that hold sessions of `userId`, in node id order.
    package func nodes(of userId: String) -> [NodeSessions] {
        // On a single node (and in a cluster whose other nodes are empty) without hashing the user id: this is on
        // the path of every relayed message.
        guard !byUser.isEmpty else { return [] }
        return byUser[userId] ?? []
    }

    /// Whether `userId` has a session on another node.
    package func isOnline(_ userId: String) -> Bool { byUser[userId] != nil }

    /// The users online on other nodes, unsorted.
    package var users: Dictionary<String, [NodeSessions]>.Keys { byUser.keys }

    /// The (node, user) pairs of this view that `new` no longer has, in node and user order: users who left a node,
    /// or whose node left the cluster.
    package func departures(to new: RemotePresence) -> [(node: String, user: String)] {
        var gone: [(node: String, user: String)] = []
        for (user, nodes) in byUser {
            let remaining = new.byUser[user] ?? []
            for entry in nodes where !remaining.contains(where: { $0.node == entry.node }) {
                gone.append((entry.node, user))
            }
        }
        return gone.sorted { ($0.node, $0.user) < ($1.node, $1.user) }
    }

    /// Whether no other node holds any session.
    package var isEmpty: Bool { byUser.isEmpty }

    /// How many sessions the other nodes hold.
    package var sessionCount: Int { byUser.values.reduce(0) { $0 + $1.reduce(0) { $0 + $1.sessions } } }
}
