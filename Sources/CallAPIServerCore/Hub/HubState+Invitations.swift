import CallAPISignalProtocol

/// The hub's invitations (docs/invitations.md): the nested ``InvitationMachine`` arbitrates those its sessions send;
/// on a node of a cluster, the callee's sessions on other nodes are reached through those nodes, and the nested
/// ``RemoteInvitations`` passes other nodes' invitations to the sessions here and what they do back.
extension HubState {
    /// Runs the invitation machine and queues its frames in order: to sessions here, or through their nodes.
    mutating func runInvitations(_ input: InvitationInput, now: Int64, into actions: inout [HubAction]) {
        for case .send(let endpoint, let frame) in invitations.handle(input, now: now) {
            switch endpoint {
            case .local(let session):
                enqueue(frame, to: session, into: &actions)
            case .remote(let node, let user, let session):
                // Remote endpoints come from the other nodes' sessions: only a node of a cluster has them.
                guard case .node(let own) = topology else { continue }
                actions.append(
                    .cluster(
                        .invitation(
                            InvitationRelay(node: node, step: .frame(frame, session: session, user: user, owner: own))
                        )))
            }
        }
    }

    /// The callee's sessions an invitation is handed to: here, and on the other nodes of a cluster.
    func invitationEndpoints(of callee: String) -> [InvitationEndpoint] {
        let local = presence.sessions(of: callee).map(InvitationEndpoint.local)
        guard case .node = topology else { return local }
        return local
            + presence.remote.nodes(of: callee).flatMap { node in
                node.ids.map { InvitationEndpoint.remote(node: node.node, user: callee, session: $0) }
            }
    }

    /// Passes what session `id` did about another node's invitation to that node; returns whether it was one.
    mutating func passInvitation(
        _ frame: ClientFrame, _ invitationId: String, from id: SessionID, into actions: inout [HubAction]
    ) -> Bool {
        guard case .node(let own) = topology, let owner = remoteInvitations.owner(of: invitationId, for: id),
            let user = sessions[id]?.login?.userId
        else { return false }
        actions.append(
            .cluster(
                .invitation(InvitationRelay(node: owner, step: .request(frame, from: own, user: user, session: id)))))
        return true
    }

    /// Session `id` of `user` closed: the nodes whose invitations it was handed hear it is gone (once each).
    mutating func remoteInvitationSessionClosed(_ id: SessionID, of user: String, into actions: inout [HubAction]) {
        guard case .node(let own) = topology, remoteInvitations.count > 0 else { return }
        var told: Set<String> = []
        for (owner, _) in remoteInvitations.sessionClosed(id) where told.insert(owner).inserted {
            actions.append(
                .cluster(.invitation(InvitationRelay(node: owner, step: .gone(from: own, user: user, session: id)))))
        }
    }

    /// Steps of invitations that other nodes passed to this one.
    mutating func invitationsReported(_ relays: [InvitationRelay], now: Int64, into actions: inout [HubAction]) {
        guard case .node(let own) = topology else { return }
        for relay in relays {
            switch relay.step {
            case .frame(let frame, let session, let user, let owner):
                // Gone, or (after a restart of this node under the same name) now someone else's: the invitation's
                // node hears so, as of a session that closed.
                guard sessions[session]?.login?.userId == user else {
                    actions.append(
                        .cluster(
                            .invitation(
                                InvitationRelay(node: owner, step: .gone(from: own, user: user, session: session)))))
                    continue
                }
                switch remoteInvitations.deliver(frame, to: session, owner: owner) {
                case .deliver: enqueue(frame, to: session, into: &actions)
                case .alreadyEnded: break
                }
            case .request(let frame, let node, let user, let session):
                let endpoint = InvitationEndpoint.remote(node: node, user: user, session: session)
                switch frame {
                case .invitationReceived(let ref): runInvitations(.received(endpoint, ref), now: now, into: &actions)
                case .acceptInvitation(let reply): runInvitations(.accept(endpoint, reply), now: now, into: &actions)
                case .refuseInvitation(let reply): runInvitations(.refuse(endpoint, reply), now: now, into: &actions)
                default: break  // only these three are passed (``passInvitation(_:_:from:into:)``)
                }
            case .gone(let node, let user, let session):
                runInvitations(
                    .sessionClosed(.remote(node: node, user: user, session: session)), now: now, into: &actions)
            }
        }
    }

    /// `user` has no session left on `node` (read in the other nodes' sessions): the invitations this node
    /// arbitrates lose those callee sessions, and those `node` arbitrated for `user` as caller end here.
    mutating func invitationDeparture(node: String, user: String, now: Int64, into actions: inout [HubAction]) {
        runInvitations(.remoteSessionsGone(node: node, user: user), now: now, into: &actions)
        for (session, frame) in remoteInvitations.callerGone(node: node, caller: user) {
            enqueue(frame, to: session, into: &actions)
        }
    }

    /// Other nodes' invitations whose node neither ended them nor was seen to leave, ended for the sessions here
    /// once their last window is long over.
    mutating func expireRemoteInvitations(now: Int64, into actions: inout [HubAction]) {
        guard remoteInvitations.count > 0 else { return }
        let grace = limits.invitations.acceptWindowMillis + Self.remoteInvitationGraceMillis
        for (session, frame) in remoteInvitations.expire(now: now, graceMillis: grace) {
            enqueue(frame, to: session, into: &actions)
        }
    }

    /// How long after an invitation's last window a node waits for the invitation's node to end it before it ends
    /// it for its own sessions: the invitation's node may be slow to write, or be found dead.
    static let remoteInvitationGraceMillis: Int64 = 10_000
}
