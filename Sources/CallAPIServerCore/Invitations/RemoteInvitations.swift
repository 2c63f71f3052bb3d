import CallAPISignalProtocol

/// The invitations other nodes of a cluster arbitrate whose callee has sessions on this node (docs/invitations.md,
/// "In a cluster"): which of this node's sessions were handed each one and by which node, so that what those sessions
/// do about it goes to that node, their closing is reported to it, and its death ends the invitation for them.
///
/// Nested in ``HubState``. It learns an invitation from the frames its node sends for this node's sessions: an open
/// one (`invitation_received`, `accept_sent_to_local`) adds the session, an ending removes it.
package struct RemoteInvitations: Sendable, Equatable {
    /// One invitation of another node, as far as this node's sessions are concerned.
    struct Entry: Sendable, Equatable {
        /// The node that arbitrates it: the caller's.
        var owner: String
        var caller: String
        /// This node's sessions that were handed it and have not seen it end.
        var sessions: Set<SessionID>
        /// When the invitation expires at the latest (its offer says), after which its node has ended it.
        var expiresAt: Int64
    }

    private var entries: [String: Entry] = [:]
    /// The entries each session is in, to report its closing.
    private var bySession: [SessionID: Set<String>] = [:]

    package init() {}

    /// How many invitations of other nodes have sessions here.
    package var count: Int { entries.count }

    /// The node that arbitrates `invitationId`, when `session` is one of its callee sessions here.
    package func owner(of invitationId: String, for session: SessionID) -> String? {
        guard let entry = entries[invitationId], entry.sessions.contains(session) else { return nil }
        return entry.owner
    }

    /// What to do with a frame that `owner` sends `session` about one of its invitations.
    package enum Delivery: Sendable, Equatable {
        /// Give it to the session.
        case deliver
        /// The session already saw this invitation end (this node ended it when its node left): the frame repeats an
        /// ending, and the client would hear of an invitation it no longer knows.
        case alreadyEnded
    }

    /// Notes that `owner`'s frame is about to reach `session`, and says whether it should.
    package mutating func deliver(_ frame: ServerFrame, to session: SessionID, owner: String) -> Delivery {
        guard case .remoteInvitation(let invitation) = frame else { return .deliver }
        let id = invitation.invitationId
        switch invitation.state {
        case .invitationReceived, .acceptSentToLocal:
            var entry =
                entries[id]
                ?? Entry(owner: owner, caller: invitation.callerId, sessions: [], expiresAt: invitation.expiresAt ?? 0)
            entry.sessions.insert(session)
            entries[id] = entry
            bySession[session, default: []].insert(id)
            return .deliver
        case .accepted, .refused, .canceled, .failure:
            guard entries[id]?.sessions.contains(session) == true else { return .alreadyEnded }
            forget(id, for: session)
            return .deliver
        }
    }

    /// Session `session` closed: the invitations it was in, with the node that arbitrates each, in id order.
    package mutating func sessionClosed(_ session: SessionID) -> [(owner: String, invitationId: String)] {
        var closed: [(owner: String, invitationId: String)] = []
        for id in (bySession[session] ?? []).sorted() {
            guard let owner = entries[id]?.owner else { continue }
            forget(id, for: session)
            closed.append((owner, id))
        }
        return closed
    }

    /// `caller` has no session left on `node` (the node died or left, or the caller logged out there): every
    /// invitation of theirs that `node` arbitrated ends for the sessions here. Returns them with the frame each
    /// session gets, in invitation and session order: `failure` `peer_offline`, as when the caller's session closes.
    package mutating func callerGone(node: String, caller: String) -> [(SessionID, ServerFrame)] {
        var frames: [(SessionID, ServerFrame)] = []
        for id in entries.keys.sorted() {
            guard let entry = entries[id], entry.owner == node, entry.caller == caller else { continue }
            let frame = ServerFrame.remoteInvitation(
                .init(invitationId: id, callerId: caller, state: .failure, reason: .peerOffline))
            for session in entry.sessions.sorted() {
                forget(id, for: session)
                frames.append((session, frame))
            }
        }
        return frames
    }

    /// Ends, for the sessions here, the invitations whose node should have ended them `graceMillis` ago and did not
    /// say so (a node that died before this one saw its caller online, so no departure named it): `failure`
    /// `invitation_expire`, in invitation and session order. Their node is gone or late; the client hears of the end.
    package mutating func expire(now: Int64, graceMillis: Int64) -> [(SessionID, ServerFrame)] {
        var frames: [(SessionID, ServerFrame)] = []
        guard !entries.isEmpty else { return frames }
        for id in entries.filter({ now >= $0.value.expiresAt + graceMillis }).keys.sorted() {
            guard let entry = entries[id] else { continue }
            let frame = ServerFrame.remoteInvitation(
                .init(invitationId: id, callerId: entry.caller, state: .failure, reason: .invitationExpire))
            for session in entry.sessions.sorted() {
                forget(id, for: session)
                frames.append((session, frame))
            }
        }
        return frames
    }

    private mutating func forget(_ invitationId: String, for session: SessionID) {
        entries[invitationId]?.sessions.remove(session)
        if entries[invitationId]?.sessions.isEmpty == true { entries[invitationId] = nil }
        bySession[session]?.remove(invitationId)
        if bySession[session]?.isEmpty == true { bySession[session] = nil }
    }
}
