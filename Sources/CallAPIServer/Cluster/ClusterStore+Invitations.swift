import CallAPIServerCore
import CallAPISignalProtocol
import PostgresNIO

/// The steps of invitations between nodes (docs/invitations.md, "In a cluster"): a row each in
/// `callapi_cluster_invitation_steps`, read by the node it names when woken on its own channel, or at its next poll.
extension ClusterStore {
    /// What the link read: the steps in order, and the rows it could not read (a frame this version cannot decode).
    struct InvitationSteps {
        var relays: [InvitationRelay]
        var unreadable: [String]
    }

    /// Writes `relay` for its node and wakes that node, only while this node has `epoch`; `false` when it was not
    /// written (this node is not a member with that epoch).
    func pass(_ relay: InvitationRelay, epoch: Int64, keepSeconds: Int) async throws -> Bool {
        let (step, from, user, session, frame): (String, String, String, SessionID, String) =
            switch relay.step {
            case .frame(let frame, let session, let user, let owner):
                ("frame", owner, user, session, FrameCoding.encode(frame))
            case .request(let frame, let from, let user, let session):
                ("request", from, user, session, FrameCoding.encode(frame))
            case .gone(let from, let user, let session):
                ("gone", from, user, session, "")
            }
        let rows = try await run(
            """
            WITH ins AS (
                INSERT INTO callapi_cluster_invitation_steps
                    (target_node, step, from_node, user_id, session_id, frame, expires_at)
                SELECT $3, $4, $5, $6, $7, $8, now() + $9::bigint * interval '1 second'
                WHERE EXISTS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = $1 AND epoch = $2)
                RETURNING target_node)
            SELECT pg_notify($10, '') FROM ins
            """,
            [
                .text(nodeId), .integer(epoch), .text(relay.node), .text(step), .text(from), .text(user),
                .integer(Int64(bitPattern: session.number)), .text(frame), .integer(Int64(keepSeconds)),
                .text(Self.invitationChannel(of: relay.node)),
            ])
        var written = false
        for try await _ in rows { written = true }
        return written
    }

    /// Takes the steps passed to this node, oldest first (at most `limit`), only while this node has `epoch`.
    func takeInvitationSteps(epoch: Int64, limit: Int) async throws -> InvitationSteps {
        let rows = try await run(
            """
            DELETE FROM callapi_cluster_invitation_steps WHERE id IN (
                SELECT id FROM callapi_cluster_invitation_steps WHERE target_node = $1 ORDER BY id LIMIT $3
                FOR UPDATE SKIP LOCKED)
                AND EXISTS (SELECT 1 FROM callapi_cluster_nodes WHERE node_id = $1 AND epoch = $2)
            RETURNING id, step, from_node, user_id, session_id, frame
            """, [.text(nodeId), .integer(epoch), .integer(Int64(limit))])
        var taken: [(Int64, InvitationRelay)] = []
        var unreadable: [String] = []
        for try await (id, step, from, user, sessionNumber, text) in rows.decode(
            (Int64, String, String, String, Int64, String).self)
        {
            let session = SessionID(UInt64(bitPattern: sessionNumber))
            let decoded: InvitationRelay.Step? =
                switch step {
                case "frame":
                    (try? FrameCoding.decodeServerFrame(text).get()).map {
                        .frame($0, session: session, user: user, owner: from)
                    }
                case "request":
                    (try? FrameCoding.decodeClientFrame(text).get()).map {
                        .request($0, from: from, user: user, session: session)
                    }
                case "gone":
                    .gone(from: from, user: user, session: session)
                default:
                    nil
                }
            guard let decoded else {
                unreadable.append("\(step) from \(from) for session \(session) of \(user)")
                continue
            }
            taken.append((id, InvitationRelay(node: nodeId, step: decoded)))
        }
        return InvitationSteps(relays: taken.sorted { $0.0 < $1.0 }.map(\.1), unreadable: unreadable)
    }
}
