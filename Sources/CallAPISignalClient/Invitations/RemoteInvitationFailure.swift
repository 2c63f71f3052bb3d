import CallAPISignalProtocol

/// Why an invitation to this user failed (Agora RTM v1's `RemoteInvitationError`).
public enum RemoteInvitationFailure: Sendable, Equatable {
    /// One side went offline: the caller's session closed, or this client lost its connection
    /// (`REMOTE_INVITATION_ERR_PEER_OFFLINE`).
    case peerOffline
    /// This user accepted, and the caller did not acknowledge within the accept window
    /// (`REMOTE_INVITATION_ERR_ACCEPT_FAILURE`).
    case acceptFailure
    /// Nobody accepted, refused or cancelled it in time (`REMOTE_INVITATION_ERR_INVITATION_EXPIRE`).
    case invitationExpire
    /// A reason this library does not know (sent by a newer server).
    case unknown

    init(_ reason: InvitationFailureReason?) {
        self =
            switch reason {
            case .peerOffline: .peerOffline
            case .acceptFailure: .acceptFailure
            // The callee hears "expired" when its own receipt never reached the server in time.
            case .invitationExpire, .peerNoResponse: .invitationExpire
            case .unknown, nil: .unknown
            }
    }
}
