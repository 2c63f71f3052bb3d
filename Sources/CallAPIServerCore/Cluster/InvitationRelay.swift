import CallAPISignalProtocol

/// A step of a call invitation between two nodes of a cluster (docs/invitations.md, "In a cluster"): the caller's
/// node arbitrates the invitation, and the nodes of the callee's other sessions pass its frames to them and what they
/// do back to it.
package struct InvitationRelay: Sendable, Equatable {
    /// The node meant to read it.
    package var node: String
    package var step: Step

    package enum Step: Sendable, Equatable {
        /// From the node that arbitrates an invitation (`owner`) to the node of one of the callee's sessions: give
        /// `frame` to session `session`, if it is still `user`'s.
        case frame(ServerFrame, session: SessionID, user: String, owner: String)
        /// From a callee session's node to the invitation's node: session `session` of `user` on node `from` sent
        /// `frame` (`invitation_received`, `accept_invitation` or `refuse_invitation`).
        case request(ClientFrame, from: String, user: String, session: SessionID)
        /// From a callee session's node to the invitation's node: session `session` of `user` on node `from` is gone
        /// (it closed, or was not there or not `user`'s when a frame for it arrived).
        case gone(from: String, user: String, session: SessionID)
    }

    package init(node: String, step: Step) {
        self.node = node
        self.step = step
    }
}
