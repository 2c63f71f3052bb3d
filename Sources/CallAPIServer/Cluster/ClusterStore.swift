@_spi(ServerShell) import CallAPIServerCore
import CallAPISignalProtocol
import Foundation
import Logging
import PostgresNIO

/// The cluster's rows in PostgreSQL (docs/scale-out.md): the nodes with their epochs and heartbeats, the sessions
/// (which are the presence), and the mailbox of messages between nodes. Rows are the truth; a notification only
/// wakes a node to read them.
///
/// Every write a node makes as a member names its epoch and happens only if the node's row still has it: a node
/// declared dead (stopped, cut off) cannot write sessions or messages until it has registered again.
struct ClusterStore: Sendable {
    let client: PostgresClient
    let nodeId: String
    /// The address this node advertises to clients sent to it (``ClusterSettings/advertisedURL``).
    var url: String? = nil
    let logger: Logger

    /// The channel that wakes a node to read its mailbox.
    static func mailboxChannel(of node: String) -> String { "callapi_node_\(node)" }
    /// The channel that wakes a node to read the steps of invitations other nodes passed to it.
    static func invitationChannel(of node: String) -> String { "callapi_invitations_\(node)" }
    /// The channel that tells every node the sessions changed.
    static let presenceChannel = "callapi_presence"
    /// The advisory lock key of the cluster's migration ("callapic" in ASCII, as a number).
    static let migrationLock: Int64 = 0x6361_6C6C_6170_6963

    /// Creates the tables if they are missing; nodes starting together migrate one at a time.
    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query("SELECT pg_advisory_lock(\(migrationLock))", logger: logger)
        do {
            for statement in schema {
                _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        } catch {
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(migrationLock))", logger: logger)
            throw error
        }
        _ = try await connection.query("SELECT pg_advisory_unlock(\(migrationLock))", logger: logger)
    }

    static let schema = [
        "CREATE SEQUENCE IF NOT EXISTS callapi_cluster_epochs",
        """
        CREATE TABLE IF NOT EXISTS callapi_cluster_nodes (
            node_id text PRIMARY KEY, epoch bigint NOT NULL, heartbeat_at timestamptz NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS callapi_cluster_sessions (
            node_id text NOT NULL, epoch bigint NOT NULL, session_id bigint NOT NULL, user_id text NOT NULL,
            PRIMARY KEY (node_id, session_id))
        """,
        "CREATE INDEX IF NOT EXISTS callapi_cluster_sessions_user ON callapi_cluster_sessions (user_id)",
        // The push device a session named at login: a node pushes a user's sleeping devices knowing those awake on
        // the others.
        "ALTER TABLE callapi_cluster_sessions ADD COLUMN IF NOT EXISTS device text",
        """
        CREATE TABLE IF NOT EXISTS callapi_cluster_mailbox (
            id bigserial PRIMARY KEY, target_node text, target_user text NOT NULL, from_user text NOT NULL,
            copy_of text, body text NOT NULL, sent_at bigint NOT NULL, message_id text NOT NULL,
            expires_at timestamptz NOT NULL)
        """,
        // A message held for a user who was offline, handed over when they logged in to another node.
        "ALTER TABLE callapi_cluster_mailbox ADD COLUMN IF NOT EXISTS held boolean NOT NULL DEFAULT false",
        // A copy of a message held in its node's memory: not for that node to read, and left for whichever node its
        // receiver logs in to when that node dies or leaves.
        "ALTER TABLE callapi_cluster_mailbox ADD COLUMN IF NOT EXISTS parked boolean NOT NULL DEFAULT false",
        "CREATE INDEX IF NOT EXISTS callapi_cluster_mailbox_node ON callapi_cluster_mailbox (target_node, id)",
        // A call for one push device of its receiver, and the push mark (JSON) of an answer or a withdrawal: the
        // node keeping a call pushed to sleeping devices hands it to the one a woken device logs in to, and
        // settles it when the answer passes through it (docs/push.md).
        """
        ALTER TABLE callapi_cluster_mailbox ADD COLUMN IF NOT EXISTS target_device text,
            ADD COLUMN IF NOT EXISTS push_mark text
        """,
        // Server-placed calls handed to the caller's node.
        """
        CREATE TABLE IF NOT EXISTS callapi_cluster_placements (
            id bigserial PRIMARY KEY, target_node text NOT NULL, caller text NOT NULL, callee text NOT NULL,
            media text NOT NULL, call_id text NOT NULL, expires_at timestamptz NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS callapi_cluster_placements_node ON callapi_cluster_placements (target_node, id)",
        // A matched call handed to the node where its caller entered the match queue.
        """
        ALTER TABLE callapi_cluster_placements ADD COLUMN IF NOT EXISTS match_id text,
            ADD COLUMN IF NOT EXISTS match_tag text, ADD COLUMN IF NOT EXISTS caller_session bigint
        """,
        // Push devices: one row per user with its whole list (JSON), numbered by change (docs/scale-out.md).
        "CREATE SEQUENCE IF NOT EXISTS callapi_cluster_device_changes",
        """
        CREATE TABLE IF NOT EXISTS callapi_cluster_devices (
            user_id text PRIMARY KEY, entries text NOT NULL, change bigint NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS callapi_cluster_devices_change ON callapi_cluster_devices (change)",
        """
        CREATE INDEX IF NOT EXISTS callapi_cluster_mailbox_unclaimed ON callapi_cluster_mailbox (target_user, id)
            WHERE target_node IS NULL
        """,
        // The users in an accepted call, by the node whose ledger recorded it: any node answers busy for them.
        """
        CREATE TABLE IF NOT EXISTS callapi_cluster_busy (
            node_id text NOT NULL, epoch bigint NOT NULL, user_id text NOT NULL, call_id text NOT NULL,
            peer text NOT NULL, PRIMARY KEY (node_id, user_id))
        """,
        // Tombstones of withdrawn pushed calls, by the node that withdrew them, until they expire (ms since 1970).
        """
        CREATE TABLE IF NOT EXISTS callapi_cluster_tombstones (
            user_id text NOT NULL, call_id text NOT NULL, node_id text NOT NULL, reason text NOT NULL,
            at bigint NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (user_id, call_id))
        """,
        // The calls in progress, by the node (and epoch) whose ledger has them: a survivor takes over those of a
        // node that died or left, from when they were orphaned (docs/scale-out.md, "The ledger across nodes").
        """
        CREATE TABLE IF NOT EXISTS callapi_cluster_calls (
            call_id text PRIMARY KEY, node_id text NOT NULL, epoch bigint NOT NULL, recorded_by text NOT NULL,
            caller text NOT NULL, callee text NOT NULL, orphaned_at timestamptz, snapshot text NOT NULL)
        """,
        // Steps of invitations between the caller's node and the nodes of the callee's other sessions
        // (docs/invitations.md, "In a cluster"): `step` is frame, request or gone; `frame` a frame's JSON text.
        """
        CREATE TABLE IF NOT EXISTS callapi_cluster_invitation_steps (
            id bigserial PRIMARY KEY, target_node text NOT NULL, step text NOT NULL, from_node text NOT NULL,
            user_id text NOT NULL, session_id bigint NOT NULL, frame text NOT NULL, expires_at timestamptz NOT NULL)
        """,
        """
        CREATE INDEX IF NOT EXISTS callapi_cluster_invitation_steps_node
            ON callapi_cluster_invitation_steps (target_node, id)
        """,
        // The match queue: one row per waiting user, by the node and session that entered it (docs/match.md).
        "CREATE SEQUENCE IF NOT EXISTS callapi_cluster_match_arrivals",
        """
        CREATE TABLE IF NOT EXISTS callapi_cluster_match_queue (
            user_id text PRIMARY KEY, node_id text NOT NULL, epoch bigint NOT NULL, session_id bigint NOT NULL,
            tags text[] NOT NULL, arrival bigint NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS callapi_cluster_match_queue_tags ON callapi_cluster_match_queue USING gin (tags)",
        // The address a node advertises for clients sent to it (a channel's home, below), if it has one.
        "ALTER TABLE callapi_cluster_nodes ADD COLUMN IF NOT EXISTS url text",
        // The RTC channels' homes: the node (and epoch) where each channel's members meet (docs/scale-out.md).
        """
        CREATE TABLE IF NOT EXISTS callapi_cluster_channels (
            channel text PRIMARY KEY, node_id text NOT NULL, epoch bigint NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS callapi_cluster_channels_node ON callapi_cluster_channels (node_id)",
    ]

    // MARK: - Membership

    /// Registers this node with a new epoch. Its sessions of an earlier life are deleted and the messages waiting
    /// for them are left for whichever node their users are on (this one takes its users' back at its next read).
    func register() async throws -> Int64 {
        let rows = try await run(
            """
            WITH n AS (
                INSERT INTO callapi_cluster_nodes (node_id, epoch, heartbeat_at, url)
                VALUES ($1, nextval('callapi_cluster_epochs'), now(), NULLIF($2, ''))
                ON CONFLICT (node_id) DO UPDATE SET epoch = EXCLUDED.epoch, heartbeat_at = now(), url = EXCLUDED.url
                RETURNING epoch),
            s AS (DELETE FROM callapi_cluster_sessions WHERE node_id = $1),
            h AS (DELETE FROM callapi_cluster_channels WHERE node_id = $1),
            m AS (UPDATE callapi_cluster_mailbox SET target_node = NULL, parked = false WHERE target_node = $1),
            c AS (UPDATE callapi_cluster_calls SET orphaned_at = now() WHERE node_id = $1 AND orphaned_at IS NULL),
            q AS (DELETE FROM callapi_cluster_match_queue WHERE node_id = $1)
            SELECT epoch FROM n
            """, [.text(nodeId), .text(url ?? "")])
        for try await epoch in rows.decode(Int64.self) { return epoch }
        throw ClusterError("registering node \(nodeId) returned no epoch")
    }

    /// Saves the heartbeat; `false` when this node's row is gone or has another epoch (it was declared dead).
    func beat(epoch: Int64) async throws -> Bool {
        let rows = try await run(
            "UPDATE callapi_cluster_nodes SET heartbeat_at = now() WHERE node_id = $1 AND epoch = $2 RETURNING epoch",
            [.text(nodeId), .integer(epoch)])
        for try await _ in rows.decode(Int64.self) { return true }
        return false
    }

    /// Declares dead the nodes whose heartbeat is older than `deadAfterMillis`: their rows and sessions go, their
    /// mailbox is left for whichever node their users log in to. Expired messages and sessions without a live node
    /// are deleted too. Returns the nodes declared dead now.
    func sweep(deadAfterMillis: Int64) async throws -> [String] {
        let rows = try await run(
            """
            WITH dead AS (
                DELETE FROM callapi_cluster_nodes WHERE heartbeat_at < now() - $1::bigint * interval '1 millisecond'
                RETURNING node_id),
            s AS (
                DELETE FROM callapi_cluster_sessions s WHERE s.node_id IN (SELECT node_id FROM dead)
                OR NOT EXISTS (
                    SELECT 1 FROM callapi_cluster_nodes n WHERE n.node_id = s.node_id AND n.epoch = s.epoch)),
            m AS (
                UPDATE callapi_cluster_mailbox SET target_node = NULL, parked = false
                WHERE target_node IN (SELECT node_id FROM dead)),
            e AS (DELETE FROM callapi_cluster_mailbox WHERE expires_at < now()),
            i AS (
                DELETE FROM callapi_cluster_invitation_steps
                WHERE expires_at < now() OR target_node IN (SELECT node_id FROM dead)),
            b AS (DELETE FROM callapi_cluster_busy WHERE node_id IN (SELECT node_id FROM dead)),
            h AS (DELETE FROM callapi_cluster_channels WHERE node_id IN (SELECT node_id FROM dead)),
            q AS (DELETE FROM callapi_cluster_match_queue WHERE node_id IN (SELECT node_id FROM dead)),
            c AS (
                UPDATE callapi_cluster_calls SET orphaned_at = now()
                WHERE node_id IN (SELECT node_id FROM dead) AND orphaned_at IS NULL)
            SELECT node_id FROM dead
            """, [.integer(deadAfterMillis)])
        var dead: [String] = []
        for try await node in rows.decode(String.self) { dead.append(node) }
        if !dead.isEmpty { try await notifyPresence() }
        return dead.sorted()
    }

    /// Deletes this node's rows: it leaves the cluster at once (a graceful stop).
    func leave(epoch: Int64) async throws {
        try await exec(
            """
            WITH n AS (DELETE FROM callapi_cluster_nodes WHERE node_id = $1 AND epoch = $2),
            s AS (DELETE FROM callapi_cluster_sessions WHERE node_id = $1),
            m AS (UPDATE callapi_cluster_mailbox SET target_node = NULL, parked = false WHERE target_node = $1),
            b AS (DELETE FROM callapi_cluster_busy WHERE node_id = $1),
            h AS (DELETE FROM callapi_cluster_channels WHERE node_id = $1),
            c AS (UPDATE callapi_cluster_calls SET orphaned_at = now() WHERE node_id = $1 AND orphaned_at IS NULL),
            q AS (DELETE FROM callapi_cluster_match_queue WHERE node_id = $1)
            SELECT pg_notify('\(Self.presenceChannel)', $1)
            """, [.text(nodeId), .integer(epoch)])
    }

    // MARK: - Presence

    /// The other live nodes' sessions, with the devices they run on.
    func remotePresence(deadAfterMillis: Int64) async throws -> RemotePresence {
        let rows = try await run(
            """
            SELECT s.node_id, s.user_id, s.session_id, coalesce(s.device, '') FROM callapi_cluster_sessions s
            JOIN callapi_cluster_nodes n ON n.node_id = s.node_id AND n.epoch = s.epoch
            WHERE s.node_id <> $1 AND n.heartbeat_at >= now() - $2::bigint * interval '1 millisecond'
            """, [.text(nodeId), .integer(deadAfterMillis)])
        var found: [(node: String, row: SessionRow)] = []
        for try await (node, user, id, device) in rows.decode((String, String, Int64, String).self) {
            found.append(
                (
                    node,
                    SessionRow(
                        session: SessionID(UInt64(bitPattern: id)), userId: user, device: device.isEmpty ? nil : device)
                ))
        }
        return RemotePresence(sessions: found)
    }

    /// Replaces this node's busy rows with `users` (only while this node has `epoch`), in one statement: the rows of
    /// users no longer busy are deleted, the others written over.
    func publishBusy(_ users: [BusyUser], epoch: Int64) async throws {
        try await exec(
            """
            WITH gone AS (DELETE FROM callapi_cluster_busy WHERE node_id = $1 AND user_id <> ALL ($3::text[]))
            INSERT INTO callapi_cluster_busy (node_id, epoch, user_id, call_id, peer)
            SELECT $1, $2, t.usr, t.call, t.peer FROM unnest($3::text[], $4::text[], $5::text[]) AS t(usr, call, peer)
            WHERE EXISTS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = $1 AND epoch = $2)
            ON CONFLICT (node_id, user_id) DO UPDATE
                SET epoch = excluded.epoch, call_id = excluded.call_id, peer = excluded.peer
            """,
            [
                .text(nodeId), .integer(epoch), .texts(users.map(\.user)), .texts(users.map(\.callId)),
                .texts(users.map(\.peer)),
            ])
    }

    /// Writes a tombstone for the other nodes (replacing one of the same user and call), and deletes the expired ones.
    func saveTombstone(_ entry: UserTombstone) async throws {
        let tombstone = entry.tombstone
        try await exec(
            """
            WITH expired AS (DELETE FROM callapi_cluster_tombstones WHERE expires_at <= $6)
            INSERT INTO callapi_cluster_tombstones (user_id, call_id, node_id, reason, at, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (user_id, call_id) DO UPDATE
                SET node_id = excluded.node_id, reason = excluded.reason, at = excluded.at,
                    expires_at = excluded.expires_at
            """,
            [
                .text(entry.userId), .text(tombstone.callId), .text(nodeId), .text(tombstone.reason.rawValue),
                .integer(tombstone.at), .integer(tombstone.expiresAt),
            ])
    }

    /// The other nodes' tombstones not expired at `now` (ms since 1970), oldest first, and the calls of rows whose
    /// reason this version does not know (written by a newer one).
    func tombstones(now: Int64) async throws -> (tombstones: [UserTombstone], unreadable: [String]) {
        let rows = try await run(
            """
            SELECT user_id, call_id, reason, at, expires_at FROM callapi_cluster_tombstones
            WHERE node_id <> $1 AND expires_at > $2 ORDER BY at, user_id, call_id
            """, [.text(nodeId), .integer(now)])
        var found: [UserTombstone] = []
        var unreadable: [String] = []
        for try await (user, callId, reason, at, expiresAt) in rows.decode((String, String, String, Int64, Int64).self)
        {
            guard let reason = PushMark.Reason(rawValue: reason) else {
                unreadable.append(callId)
                continue
            }
            found.append(
                UserTombstone(
                    userId: user, tombstone: Tombstone(callId: callId, reason: reason, at: at, expiresAt: expiresAt)))
        }
        return (found, unreadable)
    }

    /// Writes the calls in progress that changed since the last time and deletes those that ended (only while this
    /// node has `epoch`, and only its own rows: one taken over by another node stays theirs).
    func publishCalls(changed: [LiveCallSnapshot], ended: [String], epoch: Int64) async throws {
        let encoder = JSONEncoder()
        let snapshots = try changed.map { try String(decoding: encoder.encode($0), as: UTF8.self) }
        try await exec(
            """
            WITH live AS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = $1 AND epoch = $2),
            gone AS (
                DELETE FROM callapi_cluster_calls
                WHERE node_id = $1 AND epoch = $2 AND call_id = ANY ($5::text[]) AND EXISTS (SELECT 1 FROM live))
            INSERT INTO callapi_cluster_calls (call_id, node_id, epoch, recorded_by, caller, callee, snapshot)
            SELECT t.call, $1, $2, $1, t.caller, t.callee, t.snapshot
            FROM unnest($3::text[], $4::text[], $6::text[], $7::text[]) AS t(call, snapshot, caller, callee)
            WHERE EXISTS (SELECT 1 FROM live)
            ON CONFLICT (call_id) DO UPDATE SET snapshot = excluded.snapshot
                WHERE callapi_cluster_calls.node_id = $1 AND callapi_cluster_calls.epoch = $2
            """,
            [
                .text(nodeId), .integer(epoch), .texts(changed.map(\.callId)), .texts(snapshots),
                .texts(ended), .texts(changed.map(\.caller)), .texts(changed.map(\.callee)),
            ])
    }

    /// Releases calls this node handed off (their participants are on other nodes), only while it has `epoch`: each
    /// row, written or updated with the call as it is now, gets epoch 0, which no member has, and is orphaned now, so
    /// that a node with one of its participants takes it over at its next sweep (and any node after the grace).
    func releaseCalls(_ calls: [LiveCallSnapshot], epoch: Int64) async throws {
        let encoder = JSONEncoder()
        let snapshots = try calls.map { try String(decoding: encoder.encode($0), as: UTF8.self) }
        try await exec(
            """
            INSERT INTO callapi_cluster_calls (call_id, node_id, epoch, recorded_by, caller, callee, snapshot, orphaned_at)
            SELECT t.call, $1, 0, $1, t.caller, t.callee, t.snapshot, now()
            FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) AS t(call, snapshot, caller, callee)
            WHERE EXISTS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = $1 AND epoch = $2)
            ON CONFLICT (call_id) DO UPDATE SET epoch = 0, snapshot = excluded.snapshot, orphaned_at = now()
                WHERE callapi_cluster_calls.node_id = $1 AND callapi_cluster_calls.epoch = $2
            """,
            [
                .text(nodeId), .integer(epoch), .texts(calls.map(\.callId)), .texts(snapshots),
                .texts(calls.map(\.caller)), .texts(calls.map(\.callee)),
            ])
    }

    /// Takes over calls in progress whose node is no longer a member with the epoch it wrote them in (found dead,
    /// left, or restarted), while this node has `epoch`: at once those whose caller or callee is among `users` (on
    /// this node, whose ledger will hear them), and any after `graceMillis` (their users may be nowhere). Each row is
    /// taken by one node: the update locks it, and a second node's update finds it already theirs.
    func claimCalls(epoch: Int64, users: [String], graceMillis: Int64) async throws -> ClaimedCalls {
        let rows = try await run(
            """
            UPDATE callapi_cluster_calls c SET node_id = $1, epoch = $2, orphaned_at = NULL
            WHERE NOT EXISTS (
                SELECT 1 FROM callapi_cluster_nodes n WHERE n.node_id = c.node_id AND n.epoch = c.epoch)
            AND (c.caller = ANY ($3::text[]) OR c.callee = ANY ($3::text[]) OR c.orphaned_at IS NULL
                OR c.orphaned_at < now() - $4::bigint * interval '1 millisecond')
            AND EXISTS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = $1 AND epoch = $2)
            RETURNING c.call_id, c.recorded_by, c.snapshot
            """, [.text(nodeId), .integer(epoch), .texts(users), .integer(graceMillis)])
        let decoder = JSONDecoder()
        var byNode: [String: [LiveCallSnapshot]] = [:]
        var unreadable: [String] = []
        for try await (callId, node, snapshot) in rows.decode((String, String, String).self) {
            if let call = try? decoder.decode(LiveCallSnapshot.self, from: Data(snapshot.utf8)) {
                byNode[node, default: []].append(call)
            } else {
                unreadable.append(callId)
            }
        }
        let adopted = byNode.keys.sorted().map { node in
            AdoptedCalls(node: node, calls: byNode[node, default: []].sorted { $0.callId < $1.callId })
        }
        return ClaimedCalls(adopted: adopted, unreadable: unreadable.sorted())
    }

    /// The users in an accepted call that the other live nodes recorded.
    func remoteBusy(deadAfterMillis: Int64) async throws -> RemoteBusy {
        let rows = try await run(
            """
            SELECT b.user_id, b.call_id, b.peer FROM callapi_cluster_busy b
            JOIN callapi_cluster_nodes n ON n.node_id = b.node_id AND n.epoch = b.epoch
            WHERE b.node_id <> $1 AND n.heartbeat_at >= now() - $2::bigint * interval '1 millisecond'
            """, [.text(nodeId), .integer(deadAfterMillis)])
        var users: [BusyUser] = []
        for try await (user, callId, peer) in rows.decode((String, String, String).self) {
            users.append(BusyUser(user: user, callId: callId, peer: peer))
        }
        return RemoteBusy(users)
    }

    /// Writes presence rows for `sessions` (only while this node has `epoch`), and tells the other nodes.
    func publish(_ sessions: [SessionRow], epoch: Int64) async throws {
        guard !sessions.isEmpty else { return }
        try await exec(
            """
            WITH ins AS (
                INSERT INTO callapi_cluster_sessions (node_id, epoch, session_id, user_id, device)
                SELECT $1, $2, t.session, t.usr, NULLIF(t.device, '')
                FROM unnest($3::bigint[], $4::text[], $5::text[]) AS t(session, usr, device)
                WHERE EXISTS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = $1 AND epoch = $2)
                ON CONFLICT DO NOTHING RETURNING 1)
            SELECT pg_notify('\(Self.presenceChannel)', $1) FROM (SELECT 1 FROM ins LIMIT 1) AS any_row
            """,
            [.text(nodeId), .integer(epoch)] + Self.columns(of: sessions))
    }

    /// The session rows' columns, as arrays for `unnest`: ids, users, devices ('' for none).
    private static func columns(of sessions: [SessionRow]) -> [Bind] {
        [
            .integers(sessions.map { Int64(bitPattern: $0.session.number) }), .texts(sessions.map(\.userId)),
            .texts(sessions.map { $0.device ?? "" }),
        ]
    }

    /// Writes this node's presence rows whole: exactly `sessions` (only while this node has `epoch`), in one
    /// transaction, and tells the other nodes.
    func resync(_ sessions: [SessionRow], epoch: Int64) async throws {
        let nodeId = nodeId
        let logger = logger
        try await client.withTransaction(logger: logger) { connection in
            var bindings = PostgresBindings()
            bindings.append(nodeId)
            _ = try await connection.query(
                PostgresQuery(
                    unsafeSQL: "DELETE FROM callapi_cluster_sessions WHERE node_id = $1", binds: bindings),
                logger: logger)
            var rows = PostgresBindings()
            rows.append(nodeId)
            rows.append(epoch)
            rows.append(sessions.map { Int64(bitPattern: $0.session.number) })
            rows.append(sessions.map(\.userId))
            rows.append(sessions.map { $0.device ?? "" })
            _ = try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO callapi_cluster_sessions (node_id, epoch, session_id, user_id, device)
                        SELECT $1, $2, t.session, t.usr, NULLIF(t.device, '')
                        FROM unnest($3::bigint[], $4::text[], $5::text[]) AS t(session, usr, device)
                        WHERE EXISTS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = $1 AND epoch = $2)
                        """, binds: rows), logger: logger)
        }
        try await notifyPresence()
    }

    /// Deletes a session's presence row, and tells the other nodes.
    func offline(_ session: SessionID) async throws {
        try await exec(
            """
            WITH del AS (
                DELETE FROM callapi_cluster_sessions WHERE node_id = $1 AND session_id = $2 RETURNING 1)
            SELECT pg_notify('\(Self.presenceChannel)', $1) FROM (SELECT 1 FROM del LIMIT 1) AS any_row
            """, [.text(nodeId), .integer(Int64(bitPattern: session.number))])
    }

    func notifyPresence() async throws {
        try await exec("SELECT pg_notify('\(Self.presenceChannel)', $1)", [.text(nodeId)])
    }

    // MARK: - Mailbox

    /// Writes `envelopes` into their nodes' mailboxes and wakes those nodes, in one statement, only while this node
    /// has `epoch`. Returns whether they were written (`false`: this node lost its membership).
    func forward(_ envelopes: [ClusterEnvelope], epoch: Int64, keepSeconds: Int) async throws -> Bool {
        guard !envelopes.isEmpty else { return true }
        let statement = MailboxStatements.Forward(
            bindings: Self.bindings(
                Self.columns(of: envelopes) + [.text(nodeId), .integer(epoch), .integer(Int64(keepSeconds))]))
        for try await woken in try await client.execute(statement, logger: logger) { return woken > 0 }
        return false
    }

    /// Puts messages back in the mailbox for no node in particular: whichever node their receiver logs in to takes
    /// them.
    func unclaim(_ envelopes: [ClusterEnvelope], keepSeconds: Int) async throws {
        guard !envelopes.isEmpty else { return }
        try await exec(
            """
            INSERT INTO callapi_cluster_mailbox
                (target_node, target_user, from_user, copy_of, body, sent_at, message_id, held, target_device,
                push_mark, expires_at)
            SELECT NULLIF(t.node, ''), t.usr, t.frm, NULLIF(t.cp, ''), t.body, t.sent, t.mid, t.held = 1,
                NULLIF(t.device, ''), NULLIF(t.mark, ''), now() + $11::bigint * interval '1 second'
            FROM unnest(
                $1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::bigint[],
                $9::text[], $10::text[])
                AS t(node, usr, frm, cp, body, sent, mid, held, device, mark)
            """,
            Self.columns(
                of: envelopes.map {
                    var unclaimed = $0; unclaimed.node = ""; return unclaimed
                })
                + [.integer(Int64(keepSeconds))])
    }

    /// Takes this node's messages, and those left by dead nodes for users with a session here, oldest first (at
    /// most `limit` of each), only while this node has `epoch`.
    func take(epoch: Int64, limit: Int) async throws -> [(id: Int64, envelope: ClusterEnvelope)] {
        let rows = try await client.execute(
            MailboxStatements.Take(node: nodeId, epoch: epoch, limit: Int64(limit)), logger: logger)
        var taken: [(id: Int64, envelope: ClusterEnvelope)] = []
        for try await (id, user, from, copyOf, body, sentAt, messageId, held, device, mark) in rows {
            taken.append(
                (
                    id,
                    ClusterEnvelope(
                        node: nodeId, userId: user, from: from, body: MessageBody(body), sentAt: sentAt,
                        messageId: messageId, copyOf: copyOf.isEmpty ? nil : copyOf, held: held,
                        device: device.isEmpty ? nil : device, settles: Self.pushMark(mark))
                ))
        }
        return taken.sorted { $0.id < $1.id }
    }

    // MARK: - Parked messages

    /// Parks `envelope` (a message held in this node's memory) until `expiresAt` (ms since 1970), replacing an
    /// earlier copy with its message id, only while this node has `epoch`.
    func park(_ envelope: ClusterEnvelope, expiresAt: Int64, epoch: Int64) async throws {
        try await exec(
            """
            WITH old AS (
                DELETE FROM callapi_cluster_mailbox WHERE target_node = $1 AND parked AND message_id = $6)
            INSERT INTO callapi_cluster_mailbox
                (target_node, target_user, from_user, body, sent_at, message_id, held, parked, expires_at)
            SELECT $1, $3, $4, $5, $7, $6, true, true, to_timestamp($8::bigint / 1000.0)
            WHERE EXISTS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = $1 AND epoch = $2)
            """,
            [
                .text(nodeId), .integer(epoch), .text(envelope.userId), .text(envelope.from), .text(envelope.body.text),
                .text(envelope.messageId), .integer(envelope.sentAt), .integer(expiresAt),
            ])
    }

    /// Deletes this node's parked copies of `messageIds`.
    func unpark(_ messageIds: [String]) async throws {
        guard !messageIds.isEmpty else { return }
        try await exec(
            "DELETE FROM callapi_cluster_mailbox WHERE target_node = $1 AND parked AND message_id = ANY($2::text[])",
            [.text(nodeId), .texts(messageIds)])
    }

    // MARK: - Placed calls

    /// Hands `placement` to its caller's node and wakes it, only while this node has `epoch`. Returns whether it
    /// was written.
    func place(_ placement: ForwardedPlacement, epoch: Int64, keepSeconds: Int) async throws -> Bool {
        let rows = try await run(
            """
            WITH ins AS (
                INSERT INTO callapi_cluster_placements
                    (target_node, caller, callee, media, call_id, expires_at, match_id, match_tag, caller_session)
                SELECT $1, $2, $3, $4, $5, now() + $8::bigint * interval '1 second', NULLIF($9, ''), $10, $11
                WHERE EXISTS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = $6 AND epoch = $7)
                RETURNING target_node)
            SELECT count(*)::bigint FROM (SELECT pg_notify('callapi_node_' || target_node, '') FROM ins) AS woken
            """,
            [
                .text(placement.node), .text(placement.order.caller), .text(placement.order.callee),
                .text(placement.order.media.rawValue), .text(placement.callId), .text(nodeId), .integer(epoch),
                .integer(Int64(keepSeconds)), .text(placement.match?.matchId ?? ""), .text(placement.match?.tag ?? ""),
                .integer(placement.match.map { Int64(bitPattern: $0.callerSession.number) } ?? 0),
            ])
        for try await woken in rows.decode(Int64.self) { return woken > 0 }
        return false
    }

    /// Takes the placed calls handed to this node (at most `limit`), oldest first, while it has `epoch`; expired
    /// ones are deleted and left out.
    func takePlacements(epoch: Int64, limit: Int) async throws -> [ForwardedPlacement] {
        let rows = try await run(
            """
            DELETE FROM callapi_cluster_placements WHERE id IN (
                SELECT id FROM callapi_cluster_placements WHERE target_node = $1 ORDER BY id LIMIT $3
                FOR UPDATE SKIP LOCKED)
                AND EXISTS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = $1 AND epoch = $2)
            RETURNING id, caller, callee, media, call_id, expires_at > now(), coalesce(match_id, ''),
                coalesce(match_tag, ''), coalesce(caller_session, 0)
            """, [.text(nodeId), .integer(epoch), .integer(Int64(limit))])
        var taken: [(Int64, ForwardedPlacement)] = []
        for try await (id, caller, callee, media, callId, live, matchId, tag, session) in rows.decode(
            (Int64, String, String, String, String, Bool, String, String, Int64).self)
        where live {
            let order = PlaceCallOrder(caller: caller, callee: callee, media: CallMedia(rawValue: media) ?? .video)
            let match =
                matchId.isEmpty
                ? nil
                : ForwardedMatch(matchId: matchId, tag: tag, callerSession: SessionID(UInt64(bitPattern: session)))
            taken.append((id, ForwardedPlacement(node: nodeId, order: order, callId: callId, match: match)))
        }
        return taken.sorted { $0.0 < $1.0 }.map(\.1)
    }

    // MARK: - Push devices

    /// The advisory lock that puts device writes in one order ("calldevs" in ASCII): a change number is handed out
    /// under it and the lock is held to the commit, so numbers become visible in order and a reader that has seen
    /// number n has seen every smaller one.
    static let devicesLock: Int64 = 0x6361_6C6C_6465_7673

    /// Writes `list` as its user's devices (an empty list too: the others must hear the last one went), and tells
    /// the other nodes.
    func saveDevices(_ list: UserDevices) async throws {
        let entries = try String(decoding: JSONEncoder().encode(list.entries), as: UTF8.self)
        let logger = logger
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.devicesLock))", logger: logger)
            try await connection.query(
                """
                INSERT INTO callapi_cluster_devices (user_id, entries, change)
                VALUES (\(list.userId), \(entries), nextval('callapi_cluster_device_changes'))
                ON CONFLICT (user_id) DO UPDATE SET entries = EXCLUDED.entries, change = EXCLUDED.change
                """, logger: logger)
            try await connection.query("SELECT pg_notify(\(Self.presenceChannel), '')", logger: logger)
        }
    }

    /// Writes the lists of users the cluster has no list for (a node's devices from before it joined), each with a
    /// new change number, under the devices' lock; returns how many were written.
    func importDevices(_ lists: [UserDevices]) async throws -> Int {
        let encoder = JSONEncoder()
        let entries = try lists.map { try String(decoding: encoder.encode($0.entries), as: UTF8.self) }
        let users = lists.map(\.userId)
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.devicesLock))", logger: logger)
            var written = 0
            let rows = try await connection.query(
                """
                INSERT INTO callapi_cluster_devices (user_id, entries, change)
                SELECT t.usr, t.entries, nextval('callapi_cluster_device_changes')
                FROM unnest(\(users)::text[], \(entries)::text[]) AS t(usr, entries)
                ON CONFLICT (user_id) DO NOTHING
                RETURNING 1
                """, logger: logger)
            for try await _ in rows { written += 1 }
            if written > 0 {
                try await connection.query("SELECT pg_notify(\(Self.presenceChannel), '')", logger: logger)
            }
            return written
        }
    }

    /// The device lists written after change `after`, oldest first (at most `limit`), and the last change read.
    /// A row that does not decode is left out and named in `undecodable`.
    func devices(after: Int64, limit: Int) async throws -> (
        lists: [UserDevices], last: Int64, undecodable: [String]
    ) {
        let rows = try await run(
            "SELECT user_id, entries, change FROM callapi_cluster_devices WHERE change > $1 ORDER BY change LIMIT $2",
            [.integer(after), .integer(Int64(limit))])
        var lists: [UserDevices] = []
        var undecodable: [String] = []
        var last = after
        let decoder = JSONDecoder()
        for try await (user, entries, change) in rows.decode((String, String, Int64).self) {
            last = change
            if let decoded = try? decoder.decode([DeviceRegistry.Entry].self, from: Data(entries.utf8)) {
                lists.append(UserDevices(userId: user, entries: decoded))
            } else {
                undecodable.append(user)
            }
        }
        return (lists, last, undecodable)
    }

    // MARK: - Statements

    private static func columns(of envelopes: [ClusterEnvelope]) -> [Bind] {
        [
            .texts(envelopes.map(\.node)), .texts(envelopes.map(\.userId)), .texts(envelopes.map(\.from)),
            .texts(envelopes.map { $0.copyOf ?? "" }), .texts(envelopes.map(\.body.text)),
            .integers(envelopes.map(\.sentAt)), .texts(envelopes.map(\.messageId)),
            .integers(envelopes.map { $0.held ? 1 : 0 }), .texts(envelopes.map { $0.device ?? "" }),
            .texts(envelopes.map { $0.settles.map(pushMarkText) ?? "" }),
        ]
    }

    /// A push mark as the mailbox keeps it (JSON).
    private static func pushMarkText(_ mark: PushMark) -> String {
        // Encoding a struct of strings and booleans cannot fail.
        (try? JSONEncoder().encode(mark)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// A push mark read back from the mailbox; `nil` for none (or, from another version, one this does not read).
    static func pushMark(_ text: String) -> PushMark? {
        text.isEmpty ? nil : try? JSONDecoder().decode(PushMark.self, from: Data(text.utf8))
    }

    enum Bind {
        case text(String)
        case integer(Int64)
        case texts([String])
        case integers([Int64])
    }

    /// Runs a statement whose rows are not needed, reading them to the end: errors surface, and the connection
    /// goes back to the pool at once.
    func exec(_ sql: String, _ binds: [Bind]) async throws {
        for try await _ in try await run(sql, binds) {}
    }

    func run(_ sql: String, _ binds: [Bind]) async throws -> PostgresRowSequence {
        try await client.query(PostgresQuery(unsafeSQL: sql, binds: Self.bindings(binds)), logger: logger)
    }

    private static func bindings(_ binds: [Bind]) -> PostgresBindings {
        var bindings = PostgresBindings()
        for bind in binds {
            switch bind {
            case .text(let value): bindings.append(value)
            case .integer(let value): bindings.append(value)
            case .texts(let values): bindings.append(values)
            case .integers(let values): bindings.append(values)
            }
        }
        return bindings
    }
}

/// A cluster operation that failed, said plainly.
/// Calls in progress taken over from nodes that died or left, by the node that recorded them, and the ids of rows
/// that could not be read (written by a newer version, say): those stay this node's rows, reported, not adopted.
struct ClaimedCalls {
    var adopted: [AdoptedCalls]
    var unreadable: [String]
}

struct ClusterError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }

    /// What went wrong, in a sentence: PostgreSQL's own message when it sent one.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            return error.serverInfo?[.message] ?? "\(error.code)"
        }
        return "\(error)"
    }
}
