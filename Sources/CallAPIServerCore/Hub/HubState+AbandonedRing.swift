import CallAPISignalProtocol

/// The end of a ring the ledger gave up on (docs/ledger.md): each side gets, from the other, the cancel a
/// timed-out ring sends, on every session it has here and on other nodes of a cluster. A side with no session at
/// that moment is told nothing: its client starts clean when it comes back, and the ledger's record already says
/// how the call ended.
extension HubState {
    mutating func endAbandonedRing(_ ring: AbandonedRing, now: Int64, into actions: inout [HubAction]) {
        for cancel in ring.cancels(now: now) {
            deliverOnBehalf(of: cancel.from, to: cancel.to, MessageBody(cancel.body), now: now, into: &actions)
        }
    }

    /// A message the server writes on `sender`'s behalf, to every session of `receiver` here and on other nodes.
    // Kept out of line: inlined into the loop above, the release build's ownership verifier crashed (Swift 6.2).
    @inline(never)
    mutating func deliverOnBehalf(
        of sender: String, to receiver: String, _ body: MessageBody, now: Int64, into actions: inout [HubAction]
    ) {
        let messageId = makeMessageId()
        let frame = ServerFrame.message(.init(from: sender, relayBody: body, sentAt: now, messageId: messageId))
        for session in presence.sessions(of: receiver) { enqueue(frame, to: session, into: &actions) }
        let remote = presence.remote.nodes(of: receiver)
        guard !remote.isEmpty else { return }
        let envelopes = remote.map {
            ClusterEnvelope(
                node: $0.node, userId: receiver, from: sender, body: body, sentAt: now, messageId: messageId)
        }
        actions.append(.cluster(.forward(envelopes, receipt: nil)))
    }
}
