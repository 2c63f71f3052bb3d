/// Where an invitation to this user stands (Agora RTM v1's `RemoteInvitationState`, without `idle`).
public enum RemoteInvitationState: Sendable, Equatable {
    /// It arrived (`REMOTE_INVITATION_STATE_INVITATION_RECEIVED`).
    case invitationReceived
    /// This client accepted; the caller's acknowledgement is awaited (`REMOTE_INVITATION_STATE_ACCEPT_SENT_TO_LOCAL`).
    case acceptSentToLocal
    /// This user refused, on this or another of its devices (`REMOTE_INVITATION_STATE_REFUSED`). Final.
    case refused
    /// This user accepted, on this or another of its devices, and the caller acknowledged
    /// (`REMOTE_INVITATION_STATE_ACCEPTED`). Final.
    case accepted
    /// The caller cancelled it (`REMOTE_INVITATION_STATE_CANCELED`). Final.
    case canceled
    /// It ended in failure (`REMOTE_INVITATION_STATE_FAILURE` with the error code). Final.
    case failure(RemoteInvitationFailure)

    /// Whether the invitation is over.
    public var isFinal: Bool {
        switch self {
        case .invitationReceived, .acceptSentToLocal: false
        case .refused, .accepted, .canceled, .failure: true
        }
    }
}
