import PostgresNIO

/// The two statements on every cross-node message's path, prepared once per pooled connection (postgres-nio
/// prepares a ``PostgresPreparedStatement`` by name on first use and reuses it): planned anew each time, each
/// spent about 0.4 ms planning on this kind of machine, as long as it ran (`EXPLAIN (ANALYZE, SUMMARY)`,
/// docs/scale-out.md).
enum MailboxStatements {
    /// Writes envelopes to their target nodes' mailboxes and wakes each target node once, only while the writing
    /// node (`$11`) has its epoch (`$12`); `$13` is the mailbox's keep time in seconds. Each notification carries its
    /// node's rows (``MailboxNotice``) when they fit in one, else nothing. Its one row counts the nodes woken: 0 when
    /// the node no longer has its epoch (nothing was written).
    struct Forward: PostgresPreparedStatement {
        static let name = "callapi_cluster_forward"
        static let sql = """
            WITH ins AS (
                INSERT INTO callapi_cluster_mailbox
                    (target_node, target_user, from_user, copy_of, body, sent_at, message_id, held, target_device,
                    push_mark, expires_at)
                SELECT t.node, t.usr, t.frm, NULLIF(t.cp, ''), t.body, t.sent, t.mid, t.held = 1, NULLIF(t.device, ''),
                    NULLIF(t.mark, ''), now() + $13::bigint * interval '1 second'
                FROM unnest(
                    $1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::bigint[],
                    $9::text[], $10::text[])
                    AS t(node, usr, frm, cp, body, sent, mid, held, device, mark)
                WHERE EXISTS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = $11 AND epoch = $12)
                RETURNING id, target_node, target_user, from_user, copy_of, body, sent_at, message_id, held,
                    target_device, push_mark)
            SELECT count(*)::bigint FROM (
                SELECT pg_notify(
                    'callapi_node_' || node, CASE WHEN octet_length(rows) < \(MailboxNotice.maxBytes) THEN rows ELSE '' END)
                FROM (
                    SELECT target_node AS node, json_agg(json_build_object(
                        'i', id, 'u', target_user, 'f', from_user, 'c', copy_of, 'b', body, 's', sent_at,
                        'm', message_id, 'h', held, 'd', target_device, 'p', push_mark) ORDER BY id)::text AS rows
                    FROM ins GROUP BY target_node) AS n
            ) AS woken
            """
        typealias Row = Int64

        let bindings: PostgresBindings

        func makeBindings() -> PostgresBindings { bindings }
        func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
    }

    /// Takes (deletes and returns) up to `$3` of node `$1`'s messages, and as many left by no node for users with a
    /// session on it, only while it has epoch `$2`. The ids are gathered into one array so that the delete finds
    /// its rows by the primary key: `id IN (…) OR id IN (…)` read the whole mailbox.
    struct Take: PostgresPreparedStatement {
        static let name = "callapi_cluster_take"
        static let sql = """
            DELETE FROM callapi_cluster_mailbox WHERE id = ANY (
                ARRAY(
                    SELECT id FROM callapi_cluster_mailbox WHERE target_node = $1 AND NOT parked ORDER BY id LIMIT $3
                    FOR UPDATE SKIP LOCKED)
                || ARRAY(
                    SELECT id FROM callapi_cluster_mailbox WHERE target_node IS NULL AND target_user IN (
                        SELECT user_id FROM callapi_cluster_sessions WHERE node_id = $1 AND epoch = $2)
                    ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED))
            AND EXISTS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = $1 AND epoch = $2)
            RETURNING id, target_user, from_user, coalesce(copy_of, ''), body, sent_at, message_id, held,
                coalesce(target_device, ''), coalesce(push_mark, '')
            """
        typealias Row = (Int64, String, String, String, String, Int64, String, Bool, String, String)

        let node: String
        let epoch: Int64
        let limit: Int64

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings()
            bindings.append(node)
            bindings.append(epoch)
            bindings.append(limit)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}
