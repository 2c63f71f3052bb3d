import CallAPISignalProtocol

/// Why an invitation method failed (Agora RTM v1's `InvitationApiCallError`). The invitation's own lifecycle
/// (offline, expired, …) is reported as its state and as ``InvitationEvent``s, not thrown.
public enum InvitationApiCallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An argument was refused: an invalid user id, yourself, content over 8 KB, a channel id too long
    /// (`INVITATION_API_CALL_ERR_INVALID_ARGUMENT`).
    case invalidArgument(String)
    /// The server has no such pending invitation for this session: it ended, or was never this session's
    /// (`INVITATION_API_CALL_ERR_ALREADY_END`, also covering `NOT_STARTED`).
    case alreadyEnd(String)
    /// The invitation was already accepted (`INVITATION_API_CALL_ERR_ALREADY_ACCEPT`).
    case alreadyAccept(String)
    /// The session already has as many pending invitations as the server allows, or the callee does.
    case tooManyInvitations(String)
    /// ``SignalClient/login(token:)`` has not been called.
    case notLoggedIn
    /// The request did not reach an answer: not connected, connection lost, rate limited, timed out.
    case signaling(SignalClientError)

    init(_ error: SignalClientError) {
        switch error {
        case .refused(.invalidFrame, let message), .refused(.invalidTarget, let message),
            .refused(.tooLarge, let message):
            self = .invalidArgument(message)
        case .refused(.invitationNotFound, let message): self = .alreadyEnd(message)
        case .refused(.invitationAlreadyAccepted, let message): self = .alreadyAccept(message)
        case .refused(.tooManyInvitations, let message): self = .tooManyInvitations(message)
        case .notLoggedIn, .refused(.notLoggedIn, _): self = .notLoggedIn
        default: self = .signaling(error)
        }
    }

    public var description: String {
        switch self {
        case .invalidArgument(let message): "invalid argument: \(message)"
        case .alreadyEnd(let message): "the invitation has ended: \(message)"
        case .alreadyAccept(let message): "the invitation was already accepted: \(message)"
        case .tooManyInvitations(let message): "too many pending invitations: \(message)"
        case .notLoggedIn: "not logged in: call login(token:) first"
        case .signaling(let error): "\(error)"
        }
    }
}
