/// What happened to an invitation, named after Agora RTM v1's `RtmCallEventListener` callbacks
/// (``SignalClient/invitationEvents()``). Each carries the invitation with its new state.
public enum InvitationEvent: Sendable, Equatable {
    /// The callee's client received the invitation (`onLocalInvitationReceivedByPeer`).
    case localInvitationReceivedByPeer(LocalInvitation)
    /// The callee accepted with `response` (`onLocalInvitationAccepted`).
    case localInvitationAccepted(LocalInvitation, response: String)
    /// The callee refused with `response` (`onLocalInvitationRefused`).
    case localInvitationRefused(LocalInvitation, response: String)
    /// This client's cancel took effect (`onLocalInvitationCanceled`).
    case localInvitationCanceled(LocalInvitation)
    /// The invitation failed (`onLocalInvitationFailure`).
    case localInvitationFailure(LocalInvitation, LocalInvitationFailure)
    /// Someone invites this user (`onRemoteInvitationReceived`).
    case remoteInvitationReceived(RemoteInvitation)
    /// This user's accept is final: the caller acknowledged it (`onRemoteInvitationAccepted`).
    case remoteInvitationAccepted(RemoteInvitation)
    /// This user's refusal is final (`onRemoteInvitationRefused`).
    case remoteInvitationRefused(RemoteInvitation)
    /// The caller cancelled (`onRemoteInvitationCanceled`).
    case remoteInvitationCanceled(RemoteInvitation)
    /// The invitation failed (`onRemoteInvitationFailure`).
    case remoteInvitationFailure(RemoteInvitation, RemoteInvitationFailure)
}
