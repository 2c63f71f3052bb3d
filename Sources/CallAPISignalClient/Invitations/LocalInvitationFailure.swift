import CallAPISignalProtocol

/// Why an invitation this client sent failed (Agora RTM v1's `LocalInvitationError`).
public enum LocalInvitationFailure: Sendable, Equatable {
    /// The callee is offline, or its last session closed while the invitation was pending
    /// (`LOCAL_INVITATION_ERR_PEER_OFFLINE`). The server knows presence, so this comes at once.
    case peerOffline
    /// The callee's client did not acknowledge receiving it within the receive window
    /// (`LOCAL_INVITATION_ERR_PEER_NO_RESPONSE`).
    case peerNoResponse
    /// Nobody accepted, refused or cancelled it within the expiry window (`LOCAL_INVITATION_ERR_INVITATION_EXPIRE`).
    case invitationExpire
    /// This client lost its connection to the server, which ends the invitation
    /// (`LOCAL_INVITATION_ERR_NOT_LOGGEDIN`).
    case notLoggedIn
    /// The callee accepted, and this client's acknowledgement did not reach the server within the accept window
    /// (no RTM v1 caller code: RTM reports it to the callee only).
    case acceptFailure
    /// A reason this library does not know (sent by a newer server).
    case unknown

    init(_ reason: InvitationFailureReason?) {
        self =
            switch reason {
            case .peerOffline: .peerOffline
            case .peerNoResponse: .peerNoResponse
            case .invitationExpire: .invitationExpire
            case .acceptFailure: .acceptFailure
            case .unknown, nil: .unknown
            }
    }
}
