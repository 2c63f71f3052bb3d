import CallAPISignalProtocol

/// Something that happened to the hub's invitations (sessions are logged in). The time it happened is the `now` of
/// ``InvitationMachine/handle(_:now:)``.
package enum InvitationInput: Sendable, Equatable {
    /// `caller`'s session sends `invite`; `calleeSessions` are the callee's logged-in sessions now, on this node and
    /// (in a cluster) on the others.
    case invite(SessionID, caller: String, ClientFrame.Invite, calleeSessions: [InvitationEndpoint])
    /// A session of the callee got the invitation.
    case received(InvitationEndpoint, ClientFrame.InvitationRef)
    /// A session of the callee accepts.
    case accept(InvitationEndpoint, ClientFrame.InvitationReply)
    /// A session of the callee refuses.
    case refuse(InvitationEndpoint, ClientFrame.InvitationReply)
    /// The caller's session cancels.
    case cancel(SessionID, ClientFrame.InvitationRef)
    /// The caller's session acknowledges the callee's accept.
    case acknowledgeAccept(SessionID, ClientFrame.InvitationRef)
    /// A session closed (for whatever reason), here or on another node.
    case sessionClosed(InvitationEndpoint)
    /// `user` has no session left on the other node `node` (its sessions closed, or the node died or left).
    case remoteSessionsGone(node: String, user: String)
    /// Time passed: windows may have run out.
    case tick
}
