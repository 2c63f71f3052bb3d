@_spi(ServerShell) import CallAPIServerCore
import PostgresNIO

/// The RTC channels' homes (docs/scale-out.md, "RTC channels across nodes"): a row per channel in
/// `callapi_cluster_channels`, naming the node where its members meet. A claim held by a node that is no longer a
/// member with the epoch it claimed in is free to take.
extension ClusterStore {
    /// Claims `channel` for this node, or finds the live node that holds it; only while this node has `epoch`.
    func claimChannel(_ channel: String, epoch: Int64) async throws -> ChannelHome {
        // Twice at most: a claim that lost a race to a holder which then released it finds no row, and tries again.
        for _ in 0..<2 {
            let claimed = try await client.query(
                """
                WITH me AS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = \(nodeId) AND epoch = \(epoch)),
                claimed AS (
                    INSERT INTO callapi_cluster_channels AS c (channel, node_id, epoch)
                    SELECT \(channel), \(nodeId), \(epoch) FROM me
                    ON CONFLICT (channel) DO UPDATE SET node_id = EXCLUDED.node_id, epoch = EXCLUDED.epoch
                    WHERE c.node_id = EXCLUDED.node_id OR NOT EXISTS (
                        SELECT 1 FROM callapi_cluster_nodes n WHERE n.node_id = c.node_id AND n.epoch = c.epoch)
                    RETURNING 1)
                SELECT (SELECT count(*) FROM me), (SELECT count(*) FROM claimed)
                """, logger: logger)
            for try await (member, taken) in claimed.decode((Int64, Int64).self) {
                guard member > 0 else { throw ClusterError("this node is joining the cluster again") }
                if taken > 0 { return .here }
            }
            if let holder = try await channelHolder(channel) { return holder }
        }
        throw ClusterError("channel \(channel) could not be claimed: its holder kept changing")
    }

    /// Claims again, under this node's new `epoch`, the channels it had members of before it registered again (a
    /// node stopped past the dead limit lost its claims); returns those another node holds now.
    func reclaimChannels(_ channels: [String], epoch: Int64) async throws -> [String] {
        let rows = try await client.query(
            """
            WITH me AS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = \(nodeId) AND epoch = \(epoch))
            INSERT INTO callapi_cluster_channels AS c (channel, node_id, epoch)
            SELECT ch, \(nodeId), \(epoch) FROM unnest(\(channels)::text[]) AS ch, me
            ON CONFLICT (channel) DO UPDATE SET node_id = EXCLUDED.node_id, epoch = EXCLUDED.epoch
            WHERE c.node_id = EXCLUDED.node_id OR NOT EXISTS (
                SELECT 1 FROM callapi_cluster_nodes n WHERE n.node_id = c.node_id AND n.epoch = c.epoch)
            RETURNING channel
            """, logger: logger)
        var taken = Set<String>()
        for try await channel in rows.decode(String.self) { taken.insert(channel) }
        return channels.filter { !taken.contains($0) }
    }

    /// The live node holding `channel`, if one does (read only: nothing is claimed).
    func channelHolder(_ channel: String) async throws -> ChannelHome? {
        let holder = try await client.query(
            """
            SELECT c.node_id, n.url FROM callapi_cluster_channels c
            JOIN callapi_cluster_nodes n ON n.node_id = c.node_id AND n.epoch = c.epoch
            WHERE c.channel = \(channel)
            """, logger: logger)
        for try await (node, url) in holder.decode((String, String?).self) {
            return node == nodeId ? .here : .elsewhere(node: node, url: url)
        }
        return nil
    }

    /// Gives up this node's claim of `channel` (if it still holds it).
    func releaseChannel(_ channel: String) async throws {
        try await exec(
            "DELETE FROM callapi_cluster_channels WHERE channel = $1 AND node_id = $2", [.text(channel), .text(nodeId)])
    }
}
