/// Where an invitation this client sent stands (Agora RTM v1's `LocalInvitationState`; there is no `idle`: an
/// invitation exists once the server has it).
public enum LocalInvitationState: Sendable, Equatable {
    /// The server has it and handed it to the callee (`LOCAL_INVITATION_STATE_SENT_TO_REMOTE`).
    case sentToRemote
    /// The callee's client acknowledged receiving it (`LOCAL_INVITATION_STATE_RECEIVED_BY_REMOTE`).
    case receivedByRemote
    /// The callee accepted (`LOCAL_INVITATION_STATE_ACCEPTED_BY_REMOTE`). Final.
    case acceptedByRemote
    /// The callee refused (`LOCAL_INVITATION_STATE_REFUSED_BY_REMOTE`). Final.
    case refusedByRemote
    /// This client cancelled it (`LOCAL_INVITATION_STATE_CANCELED`). Final.
    case canceled
    /// It ended in failure (`LOCAL_INVITATION_STATE_FAILURE` with the error code). Final.
    case failure(LocalInvitationFailure)

    /// Whether the invitation is over.
    public var isFinal: Bool {
        switch self {
        case .sentToRemote, .receivedByRemote: false
        case .acceptedByRemote, .refusedByRemote, .canceled, .failure: true
        }
    }
}
