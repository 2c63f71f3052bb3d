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
        let envelopes = remote.map {
            ClusterEnvelope(
                node: $0.node, userId: send.to, from: user, body: send.relayBody, sentAt: now, messageId: messageId,
                copyOf: copyOf)
        }
        let receipt = ForwardReceipt(
            session: id, requestId: send.id, messageId: messageId, receiver: send.to, localSessions: local,
            remoteSessions: remote.reduce(0) { $0 + $1.sessions })
        actions.append(.cluster(.forward(envelopes, receipt: receipt)))
    }

    mutating func clusterReported(_ event: ClusterEvent, now: Int64, into actions: inout [HubAction]) {
        switch event {
        case .remotePresence(let view):
            if reportsRelays {
                for (node, user) in presence.remote.departures(to: view) {
                    actions.append(.remoteSessionsGone(.remote(node: node, user: user)))
                }
            }
            for change in presence.replaceRemote(with: view) {
                presenceChanged(change.userId, online: change.online, into: &actions)
            }
        case .forwarded(let receipt):
            guard sessions[receipt.session] != nil else { return }
            enqueue(
                .answer(
                    .init(
                        id: receipt.requestId, result: .delivered, messageId: receipt.messageId,
                        sessions: receipt.localSessions + receipt.remoteSessions)), to: receipt.session,
                into: &actions)
        case .forwardFailed(let receipt, let reason):
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
        case .arrived(let envelopes):
            var unclaimed: [ClusterEnvelope] = []
            for envelope in envelopes {
                let targets = presence.sessions(of: envelope.userId)
                guard !targets.isEmpty else {
                    unclaimed.append(envelope)
                    continue
                }
                let frame = envelope.frame
                for target in targets { enqueue(frame, to: target, into: &actions) }
                reportArrival(envelope, deliveredTo: targets, into: &actions)
            }
            if !unclaimed.isEmpty { actions.append(.cluster(.unclaimed(unclaimed))) }
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
