import CallAPISignalProtocol

/// The hub on a node of a cluster (docs/scale-out.md): messages for users on other nodes go through the cluster link,
/// whose reports come back here.
extension HubState {
    /// Sends `send` to the receiver's sessions on the `remote` nodes through their mailboxes. Its sender's answer
    /// waits for the write: "delivered" is said only of a message that no node's death can lose any more.
    mutating func forward(
        _ send: ClientFrame.Send, from id: SessionID, user: String, messageId: String, copyOf: String?, local: Int,
        remote: [RemotePresence.NodeSessions], now: Int64, into actions: inout [HubAction]
    ) {
        // An answer or a withdrawal travels with its mark: the node keeping the call's pushes may be the receiver's.
        let settles = send.push.flatMap { $0.kind == .call || copyOf != nil ? nil : $0 }
        let envelopes = remote.map {
            ClusterEnvelope(
                node: $0.node, userId: send.to, from: user, body: send.relayBody, sentAt: now, messageId: messageId,
                copyOf: copyOf, settles: settles)
        }
        let receipt = SendReceipt(
            session: id, requestId: send.id, messageId: messageId, receiver: send.to, localSessions: local,
            remoteSessions: remote.reduce(0) { $0 + $1.sessions })
        actions.append(.cluster(.forward(envelopes, receipt: .answer(receipt))))
    }

    mutating func clusterReported(_ event: ClusterEvent, now: Int64, into actions: inout [HubAction]) {
        switch event {
        case .remotePresence(let view):
            let departures =
                reportsRelays || !invitations.pending.isEmpty || remoteInvitations.count > 0
                ? presence.remote.departures(to: view) : []
            for (node, user) in departures {
                if reportsRelays { actions.append(.remoteSessionsGone(.remote(node: node, user: user))) }
                invitationDeparture(node: node, user: user, now: now, into: &actions)
            }
            for change in presence.replaceRemote(with: view) {
                presenceChanged(change.userId, online: change.online, into: &actions)
            }
            handOverHeld(now: now, into: &actions)
            handOverRinging(now: now, into: &actions)
        case .forwarded(.parked(let session, let answer)), .forwardFailed(.parked(let session, let answer), _):
            if sessions[session] != nil { enqueue(.answer(answer), to: session, into: &actions) }
        case .forwarded(.handover(let userId, let messages)):
            unpark(messages, into: &actions)
            for message in messages {
                if let callId = message.pushedCall { actions.append(.push(.cancel(callId: callId, userId: userId))) }
                toUser(
                    message.from, .heldResult(.init(messageId: message.messageId, to: userId, result: .delivered)),
                    into: &actions)
            }
        case .forwardFailed(.handover(let userId, let messages), _):
            // Held again, as they were; the next presence read tries again, until they expire.
            for message in messages { held.hold(message, for: userId) }
        case .forwarded(.answer(let receipt)):
            guard sessions[receipt.session] != nil else { return }
            enqueue(
                .answer(
                    .init(
                        id: receipt.requestId, result: .delivered, messageId: receipt.messageId,
                        sessions: receipt.localSessions + receipt.remoteSessions)), to: receipt.session,
                into: &actions)
        case .forwardFailed(.answer(let receipt), let reason):
            guard sessions[receipt.session] != nil else { return }
            // The sessions on this node have it: the answer counts them alone.
            let answer: ServerFrame.Answer =
                receipt.localSessions > 0
                ? .init(
                    id: receipt.requestId, result: .delivered, messageId: receipt.messageId,
                    sessions: receipt.localSessions)
                : .init(
                    id: receipt.requestId, result: .failed, reason: .serverBusy,
                    message: "user \(receipt.receiver) is connected to another node, which cannot be reached now "
                        + "(\(reason)); retry")
            enqueue(.answer(answer), to: receipt.session, into: &actions)
        case .placements(let placements):
            for placement in placements {
                // The node that took the order has answered it: one that cannot be placed any more (its caller or
                // callee went offline meanwhile) is recorded as not placed, as one whose caller's session closed.
                guard placementProblem(placement.order) == nil else {
                    let order = placement.order
                    actions.append(
                        .callNotPlaced(
                            NotPlacedCall(
                                callId: placement.callId, caller: order.caller, callee: order.callee,
                                media: order.media, matchId: placement.match?.matchId, reason: "callerGone")))
                    continue
                }
                if let match = placement.match {
                    placeMatched(placement.order, callId: placement.callId, match: match, now: now, into: &actions)
                } else {
                    placeCall(placement.order, callId: placement.callId, now: now, into: &actions)
                }
            }
        case .devices(let lists):
            devicesReported(lists, into: &actions)
        case .tombstones(let reported):
            tombstonesReported(reported, now: now, into: &actions)
        case .invitations(let relays):
            invitationsReported(relays, now: now, into: &actions)
        case .matchEntered(let entry, let outcome):
            clusterMatchEntered(entry, outcome, now: now, into: &actions)
        case .arrived(let envelopes):
            var unclaimed: [ClusterEnvelope] = []
            for envelope in envelopes {
                if let mark = envelope.settles, envelope.copyOf == nil {
                    settleRinging(mark, to: envelope.userId, from: envelope.from, now: now, into: &actions)
                }
                guard let device = envelope.device else {
                    let targets = presence.sessions(of: envelope.userId)
                    guard !targets.isEmpty else {
                        unclaimed.append(envelope)
                        continue
                    }
                    let frame = envelope.frame
                    for target in targets { enqueue(frame, to: target, into: &actions) }
                    reportArrival(envelope, deliveredTo: targets, into: &actions)
                    continue
                }
                // A kept call for one woken device: the node keeping it hands it again to that device's next session
                // if this one has gone.
                let frame = envelope.frame
                for target in presence.sessions(of: envelope.userId) where sessions[target]?.login?.deviceId == device {
                    enqueue(frame, to: target, into: &actions)
                }
            }
            if !unclaimed.isEmpty { actions.append(.cluster(.unclaimed(unclaimed))) }
        }
    }

    /// Hands the messages held here for users who have since logged in to other nodes (and have no session here) to
    /// those nodes' mailboxes: a user woken by a push may log in anywhere. Expired ones end as at a login here.
    mutating func handOverHeld(now: Int64, into actions: inout [HubAction]) {
        guard held.count > 0 else { return }
        let users = held.users.filter { presence.remote.isOnline($0) && presence.sessions(of: $0).isEmpty }
        for userId in users.sorted() {
            var live: [HeldMessages.Message] = []
            for message in held.takeAll(for: userId) {
                if message.expiresAt > now {
                    live.append(message)
                } else {
                    endExpired(message, of: userId, now: now, into: &actions)
                }
            }
            guard !live.isEmpty else { continue }
            let envelopes = presence.remote.nodes(of: userId).flatMap { node in
                live.map {
                    ClusterEnvelope(
                        node: node.node, userId: userId, from: $0.from, body: $0.body, sentAt: $0.sentAt,
                        messageId: $0.messageId, held: true)
                }
            }
            actions.append(.cluster(.forward(envelopes, receipt: .handover(userId: userId, live))))
        }
    }

    /// Tells the call ledger of a message another node relayed to a user here, as if relayed here from a stand-in
    /// session of its sender: the node where a call began keeps its record, and hears the other side's messages
    /// this way (a ledger never starts a call from such a message). An own-device copy is not a message between
    /// the two.
    func reportArrival(_ envelope: ClusterEnvelope, deliveredTo targets: [SessionID], into actions: inout [HubAction]) {
        guard reportsRelays, envelope.copyOf == nil, let node = envelope.senderNode else { return }
        actions.append(
            .relayed(
                RelayedSend(
                    from: envelope.from, fromSession: .remote(node: node, user: envelope.from), to: envelope.userId,
                    relayBody: envelope.body, result: .delivered(targets))))
    }
}
