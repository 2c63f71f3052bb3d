import CallAPISignalProtocol

/// Something that happened to the hub's invitations (sessions are logged in). The time it happened is the `now` of
/// ``InvitationMachine/handle(_:now:)``.
package enum InvitationInput: Sendable, Equatable {
    /// `caller`'s session sends `invite`; `calleeSessions` are the callee's logged-in sessions now.
    case invite(SessionID, caller: String, ClientFrame.Invite, calleeSessions: [SessionID])
    /// A session of the callee got the invitation.
    case received(SessionID, ClientFrame.InvitationRef)
    /// A session of the callee accepts.
    case accept(SessionID, ClientFrame.InvitationReply)
    /// A session of the callee refuses.
    case refuse(SessionID, ClientFrame.InvitationReply)
    /// The caller's session cancels.
    case cancel(SessionID, ClientFrame.InvitationRef)
    /// The caller's session acknowledges the callee's accept.
    case acknowledgeAccept(SessionID, ClientFrame.InvitationRef)
    /// A session closed (for whatever reason).
    case sessionClosed(SessionID)
    /// Time passed: windows may have run out.
    case tick
}
