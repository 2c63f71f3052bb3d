import CallAPISignalProtocol

/// The end of a ring the ledger gave up on (docs/ledger.md): each side gets, from the other, the cancel a
/// timed-out ring sends, on every session it has here and on other nodes of a cluster. A side with no session at
/// that moment is told nothing: its client starts clean when it comes back, and the ledger's record already says
/// how the call ended.
extension HubState {
    mutating func endAbandonedRing(_ ring: AbandonedRing, now: Int64, into actions: inout [HubAction]) {
        for cancel in ring.cancels(now: now) {
            let messageId = makeMessageId()
            let body = MessageBody(cancel.body)
            toUser(
                cancel.to, .message(.init(from: cancel.from, relayBody: body, sentAt: now, messageId: messageId)),
                into: &actions)
            let remote = presence.remote.nodes(of: cancel.to)
            guard !remote.isEmpty else { continue }
            let envelopes = remote.map {
                ClusterEnvelope(
                    node: $0.node, userId: cancel.to, from: cancel.from, body: body, sentAt: now, messageId: messageId)
            }
            actions.append(.cluster(.forward(envelopes, receipt: nil)))
        }
    }
}
