import CallAPISignalProtocol

/// The match queue on a node of a cluster (docs/match.md, "In a cluster"): the queue is rows of the cluster's
/// PostgreSQL, and the node of the user who enters pairs it there, under one lock, so users on any nodes are paired
/// by the single node rules. The user who was waiting places the call, from the session that entered it, on its
/// node; the placed call is then pending there as any other.
extension HubState {
    /// A session enters: bad tags are refused here; the rest waits for the database's answer.
    mutating func enterClusterMatch(
        _ enter: ClientFrame.MatchEnter, from id: SessionID, user: String, into actions: inout [HubAction]
    ) {
        if let problem = MatchProtocol.tagsProblem(enter.tags) {
            return enqueue(.error(.init(id: enter.id, code: .invalidFrame, message: problem)), to: id, into: &actions)
        }
        matchEntrants.insert(id)
        actions.append(
            .cluster(
                .matchEnter(
                    ClusterMatchEntry(session: id, user: user, enter: enter), maxWaiting: match.limits.maxWaiting)))
    }

    /// A session leaves for its user (whichever session entered): answered at once, the row deleted after.
    mutating func leaveClusterMatch(
        _ request: ClientFrame.Request, from id: SessionID, user: String, into actions: inout [HubAction]
    ) {
        for session in presence.sessions(of: user) { matchEntrants.remove(session) }
        actions.append(.cluster(.matchLeave(user: user)))
        enqueue(.matchQueue(.init(id: request.id, waiting: false, tags: [])), to: id, into: &actions)
    }

    /// The database's answer to an entry. A session that closed meanwhile hears nothing; its row, if one was
    /// written, was deleted after it (the link performs the hub's actions in order).
    mutating func clusterMatchEntered(
        _ entry: ClusterMatchEntry, _ outcome: ClusterMatchOutcome, now: Int64, into actions: inout [HubAction]
    ) {
        let open = sessions[entry.session]?.login?.userId == entry.user
        let answer = ServerFrame.matchQueue(.init(id: entry.enter.id, waiting: true, tags: entry.enter.tags))
        switch outcome {
        case .waiting:
            if open { enqueue(answer, to: entry.session, into: &actions) }
        case .full(let waiting):
            matchEntrants.remove(entry.session)
            guard open else { return }
            let message = "\(waiting) users are already waiting to be matched, the most allowed"
            enqueue(
                .error(.init(id: entry.enter.id, code: .matchQueueFull, message: message)), to: entry.session,
                into: &actions)
        case .failed(let reason):
            matchEntrants.remove(entry.session)
            guard open else { return }
            let message = "the match queue cannot be reached now (\(reason)); retry"
            enqueue(
                .error(.init(id: entry.enter.id, code: .serverBusy, message: message)), to: entry.session,
                into: &actions)
        case .matched(let peer):
            matchEntrants.remove(entry.session)
            let (matchId, callId) = match.takeMatchIds()
            if open {
                enqueue(answer, to: entry.session, into: &actions)
                enqueue(
                    .matched(.init(matchId: matchId, peer: peer.user, tag: peer.tag, callId: callId, role: .callee)),
                    to: entry.session, into: &actions)
            }
            let order = PlaceCallOrder(caller: peer.user, callee: entry.user, media: .video)
            let forwarded = ForwardedMatch(matchId: matchId, tag: peer.tag, callerSession: peer.session)
            if case .node(let own) = topology, peer.node != own {
                actions.append(
                    .cluster(
                        .placeCall(ForwardedPlacement(node: peer.node, order: order, callId: callId, match: forwarded)))
                )
            } else {
                placeMatched(order, callId: callId, match: forwarded, now: now, into: &actions)
            }
        }
    }

    /// Tells the caller's session that entered the queue of its match and has it place the call; a session gone
    /// since is recorded as a call not placed (`callerGone`).
    mutating func placeMatched(
        _ order: PlaceCallOrder, callId: String, match forwarded: ForwardedMatch, now: Int64,
        into actions: inout [HubAction]
    ) {
        let session = forwarded.callerSession
        matchEntrants.remove(session)
        guard sessions[session]?.login?.userId == order.caller else {
            actions.append(
                .callNotPlaced(
                    NotPlacedCall(
                        callId: callId, caller: order.caller, callee: order.callee, media: order.media,
                        matchId: forwarded.matchId, reason: "callerGone")))
            return
        }
        enqueue(
            .matched(
                .init(matchId: forwarded.matchId, peer: order.callee, tag: forwarded.tag, callId: callId, role: .caller)
            ),
            to: session, into: &actions)
        runMatch(
            .placeMatched(
                order, callId: callId, matchId: forwarded.matchId, tag: forwarded.tag, callerSession: session),
            now: now, into: &actions)
    }
}
