import CallAPISignalProtocol

/// A `local_invitation` or `remote_invitation` frame from the server.
enum InvitationUpdate: Sendable, Equatable {
    case local(ServerFrame.LocalInvitation)
    case remote(ServerFrame.RemoteInvitation)
}
