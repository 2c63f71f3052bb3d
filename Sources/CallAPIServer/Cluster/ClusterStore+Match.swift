import CallAPIServerCore
import Logging
import PostgresNIO

/// The cluster's match queue (docs/match.md, "In a cluster"): a row per waiting user in
/// `callapi_cluster_match_queue`. Entries are taken one at a time under an advisory lock, so two users entering at
/// once on two nodes with a tag in common are paired, not both left waiting.
extension ClusterStore {
    /// The advisory lock that puts entries in one order ("callmtch" in ASCII).
    static let matchLock: Int64 = 0x6361_6C6C_6D74_6368

    /// Enters `entry`'s user, keeping its place in line if it waited already, or pairs it with the user who waited
    /// longest among those sharing one of its tags (on a live node); only while this node has `epoch`.
    func enterMatch(_ entry: ClusterMatchEntry, maxWaiting: Int, epoch: Int64) async throws -> ClusterMatchOutcome {
        let logger = logger
        let nodeId = nodeId
        let user = entry.user
        let tags = entry.enter.tags
        return try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.matchLock))", logger: logger)
            let member = try await connection.query(
                "SELECT 1 FROM callapi_cluster_nodes WHERE node_id = \(nodeId) AND epoch = \(epoch)", logger: logger)
            var isMember = false
            for try await _ in member { isMember = true }
            guard isMember else { return .failed(reason: "this node is joining the cluster again") }

            var earlier: Int64?
            let old = try await connection.query(
                "DELETE FROM callapi_cluster_match_queue WHERE user_id = \(user) RETURNING arrival", logger: logger)
            for try await arrival in old.decode(Int64.self) { earlier = arrival }

            let peers = try await connection.query(
                """
                SELECT q.user_id, q.node_id, q.session_id, q.tags FROM callapi_cluster_match_queue q
                JOIN callapi_cluster_nodes n ON n.node_id = q.node_id AND n.epoch = q.epoch
                WHERE q.tags && \(tags) ORDER BY q.arrival LIMIT 1
                """, logger: logger)
            var found: (user: String, node: String, session: Int64, tags: [String])?
            for try await row in peers.decode((String, String, Int64, [String]).self) { found = row }
            if let found, let tag = tags.first(where: found.tags.contains) {
                try await connection.query(
                    "DELETE FROM callapi_cluster_match_queue WHERE user_id = \(found.user)", logger: logger)
                return .matched(
                    ClusterMatchPeer(
                        user: found.user, node: found.node, session: SessionID(UInt64(bitPattern: found.session)),
                        tag: tag))
            }

            if earlier == nil {
                let count = try await connection.query(
                    "SELECT count(*)::bigint FROM callapi_cluster_match_queue", logger: logger)
                for try await waiting in count.decode(Int64.self) where waiting >= maxWaiting {
                    return .full(waiting: Int(waiting))
                }
            }
            let session = Int64(bitPattern: entry.session.number)
            try await connection.query(
                """
                INSERT INTO callapi_cluster_match_queue (user_id, node_id, epoch, session_id, tags, arrival)
                VALUES (\(user), \(nodeId), \(epoch), \(session), \(tags),
                    coalesce(\(earlier), nextval('callapi_cluster_match_arrivals')))
                """, logger: logger)
            return .waiting
        }
    }

    /// Takes `user` out of the match queue.
    func leaveMatch(user: String) async throws {
        try await exec("DELETE FROM callapi_cluster_match_queue WHERE user_id = $1", [.text(user)])
    }

    /// Takes out the user that this node's session `session` entered.
    func matchSessionClosed(_ session: SessionID) async throws {
        try await exec(
            "DELETE FROM callapi_cluster_match_queue WHERE node_id = $1 AND session_id = $2",
            [.text(nodeId), .integer(Int64(bitPattern: session.number))])
    }
}
