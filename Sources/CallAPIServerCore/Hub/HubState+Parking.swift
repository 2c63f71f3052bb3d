import CallAPISignalProtocol

/// Messages held on a node of a cluster are parked in the cluster's mailbox too (docs/scale-out.md, "Held messages
/// survive their node"): the node keeps serving them from memory, and if it dies the parked rows are left for
/// whichever node their receiver logs in to.
extension HubState {
    /// Parks (or parks again, after a change) `message`, held here for `userId`, and answers its sender `queued`:
    /// on a node of a cluster once the parked copy is written (so that no node's death loses a message its sender
    /// was told is queued), or could not be (it is held here all the same, as on a single node); alone, at once.
    mutating func park(
        _ message: HeldMessages.Message, for userId: String, answering sender: (SessionID, ServerFrame.Answer),
        into actions: inout [HubAction]
    ) {
        guard case .node(let node) = topology else { return enqueue(.answer(sender.1), to: sender.0, into: &actions) }
        let envelope = ClusterEnvelope(
            node: node, userId: userId, from: message.from, body: message.body, sentAt: message.sentAt,
            messageId: message.messageId, held: true)
        actions.append(
            .cluster(.park(envelope, expiresAt: message.expiresAt, receipt: .parked(sender.0, sender.1))))
    }

    /// Takes the parked copies of `messages` out of the mailbox: this node has delivered, handed over or withdrawn
    /// them. (Expired ones leave with the mailbox's expiry.)
    func unpark(_ messages: [HeldMessages.Message], into actions: inout [HubAction]) {
        guard case .node = topology, !messages.isEmpty else { return }
        actions.append(.cluster(.unpark(messageIds: messages.map(\.messageId))))
    }
}
