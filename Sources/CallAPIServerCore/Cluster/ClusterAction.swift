import CallAPISignalProtocol

/// What the hub asks the cluster link to do (only on a node of a cluster: docs/scale-out.md). The link performs them
/// in the order given, and reports the forwards' outcome back as ``ClusterEvent``s.
package enum ClusterAction: Sendable, Equatable {
    /// A session logged in on this node: write its presence row.
    case online(SessionRow)
    /// Session `session` of `userId` left this node: delete its presence row.
    case offline(SessionID, userId: String)
    /// Write `envelopes` into the other nodes' mailboxes, in one transaction, and wake those nodes; then report
    /// ``ClusterEvent/forwarded(_:)`` or ``ClusterEvent/forwardFailed(_:)`` with `receipt` (when the sender waits
    /// for its answer).
    case forward([ClusterEnvelope], receipt: ForwardReceipt?)
    /// Park a copy of a message held here in the mailbox until `expiresAt` (ms since 1970), replacing an earlier
    /// copy with its message id: if this node dies, it goes to the node its receiver logs in to. Then report
    /// `receipt` (the sender's answer waits for it).
    case park(ClusterEnvelope, expiresAt: Int64, receipt: ForwardReceipt)
    /// Take these parked messages out of the mailbox: this node delivered, handed over or withdrew them.
    case unpark(messageIds: [String])
    /// A call placed by the server for a caller on another node: hand it to that node.
    case placeCall(ForwardedPlacement)
    /// A user's devices changed here: write their list for the other nodes.
    case devices(UserDevices)
    /// A pushed call was withdrawn for a user offline here: write its tombstone for the other nodes.
    case tombstone(UserTombstone)
    /// Messages this node was to deliver whose receiver has no session here any more: put them back in the mailbox
    /// for whichever node the receiver logs in to.
    case unclaimed([ClusterEnvelope])
    /// Pass a step of an invitation to the node named in it, and wake that node.
    case invitation(InvitationRelay)
    /// Enter a session's user in the cluster's match queue (unless `maxWaiting` users wait), or pair it; then report
    /// ``ClusterEvent/matchEntered(_:_:)``.
    case matchEnter(ClusterMatchEntry, maxWaiting: Int)
    /// Take `user` out of the match queue.
    case matchLeave(user: String)
    /// A session of this node closed: take out the user it entered.
    case matchSessionClosed(SessionID)
}

/// What waits for a forward to be written, to be told how it went.
package enum ForwardReceipt: Sendable, Equatable {
    /// A `send`'s answer.
    case answer(SendReceipt)
    /// Messages this node held for `userId` (offline when they were sent), handed to the nodes the user has since
    /// logged in to: their senders hear `held_result` `delivered` once they are written; if they are not, they are
    /// held here again, and handed over at the next presence read.
    case handover(userId: String, [HeldMessages.Message])
    /// The `queued` answer to the sender of a message held here, given once its parked copy is written or could not
    /// be (it is held in this node's memory either way).
    case parked(SessionID, ServerFrame.Answer)
}

/// A `send` whose answer waits until its message is in the other nodes' mailboxes: "delivered" is said only of a
/// message that a node's death can no longer lose.
package struct SendReceipt: Sendable, Equatable {
    /// The sender's session and its request.
    package var session: SessionID
    package var requestId: Int
    package var messageId: String
    package var receiver: String
    /// The receiver's sessions reached on this node, and on the others.
    package var localSessions: Int
    package var remoteSessions: Int

    package init(
        session: SessionID, requestId: Int, messageId: String, receiver: String, localSessions: Int,
        remoteSessions: Int
    ) {
        self.session = session
        self.requestId = requestId
        self.messageId = messageId
        self.receiver = receiver
        self.localSessions = localSessions
        self.remoteSessions = remoteSessions
    }
}
