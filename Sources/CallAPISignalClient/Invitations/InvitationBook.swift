import CallAPISignalProtocol

/// The invitations of this client's session, as a pure value: it turns the server's frames into invitation
/// states and ``InvitationEvent``s, and ends them all when the connection is lost (the server ends them too when
/// the session closes, so both sides agree).
struct InvitationBook: Sendable {
    /// Pending invitations this session sent, by id.
    private(set) var local: [String: LocalInvitation] = [:]
    /// Pending invitations to this user that this session was handed, by id.
    private(set) var remote: [String: RemoteInvitation] = [:]

    /// The server's answer to `invite`: the invitation now exists (and may have failed at once).
    mutating func sent(_ frame: ServerFrame.LocalInvitation, content: String, channelId: String)
        -> (LocalInvitation, [InvitationEvent])
    {
        var invitation = LocalInvitation(
            invitationId: frame.invitationId, calleeId: frame.calleeId, content: content, channelId: channelId)
        let events = Self.advance(&invitation, with: frame)
        local[frame.invitationId] = invitation.state.isFinal ? nil : invitation
        return (invitation, events)
    }

    /// Applies a `local_invitation` frame; nil for an invitation this session does not have.
    mutating func apply(_ frame: ServerFrame.LocalInvitation) -> (LocalInvitation?, [InvitationEvent]) {
        guard var invitation = local[frame.invitationId] else { return (nil, []) }
        let events = Self.advance(&invitation, with: frame)
        local[frame.invitationId] = invitation.state.isFinal ? nil : invitation
        return (invitation, events)
    }

    private static func advance(_ invitation: inout LocalInvitation, with frame: ServerFrame.LocalInvitation)
        -> [InvitationEvent]
    {
        switch frame.state {
        case .sentToRemote:
            return []
        case .receivedByRemote:
            guard invitation.state == .sentToRemote else { return [] }
            invitation.state = .receivedByRemote
            return [.localInvitationReceivedByPeer(invitation)]
        case .acceptPending:
            // The client has acknowledged it already; the accept is final only once the server says so.
            invitation.response = frame.response ?? ""
            return []
        case .acceptedByRemote:
            invitation.state = .acceptedByRemote
            invitation.response = frame.response ?? ""
            return [.localInvitationAccepted(invitation, response: invitation.response)]
        case .refusedByRemote:
            invitation.state = .refusedByRemote
            invitation.response = frame.response ?? ""
            return [.localInvitationRefused(invitation, response: invitation.response)]
        case .canceled:
            invitation.state = .canceled
            return [.localInvitationCanceled(invitation)]
        case .failure:
            let failure = LocalInvitationFailure(frame.reason)
            invitation.state = .failure(failure)
            return [.localInvitationFailure(invitation, failure)]
        }
    }

    /// Applies a `remote_invitation` frame; nil for an invitation this session does not have.
    mutating func apply(_ frame: ServerFrame.RemoteInvitation) -> (RemoteInvitation?, [InvitationEvent]) {
        if frame.state == .invitationReceived {
            guard remote[frame.invitationId] == nil else { return (remote[frame.invitationId], []) }
            let invitation = RemoteInvitation(
                invitationId: frame.invitationId, callerId: frame.callerId, content: frame.content ?? "",
                channelId: frame.channelId ?? "")
            remote[frame.invitationId] = invitation
            return (invitation, [.remoteInvitationReceived(invitation)])
        }
        guard var invitation = remote[frame.invitationId] else { return (nil, []) }
        var events: [InvitationEvent] = []
        switch frame.state {
        case .invitationReceived:
            break  // handled above
        case .acceptSentToLocal:
            invitation.state = .acceptSentToLocal
            invitation.response = frame.response ?? ""
        case .accepted:
            invitation.state = .accepted
            invitation.response = frame.response ?? ""
            events.append(.remoteInvitationAccepted(invitation))
        case .refused:
            invitation.state = .refused
            invitation.response = frame.response ?? ""
            events.append(.remoteInvitationRefused(invitation))
        case .canceled:
            invitation.state = .canceled
            events.append(.remoteInvitationCanceled(invitation))
        case .failure:
            let failure = RemoteInvitationFailure(frame.reason)
            invitation.state = .failure(failure)
            events.append(.remoteInvitationFailure(invitation, failure))
        }
        remote[frame.invitationId] = invitation.state.isFinal ? nil : invitation
        return (invitation, events)
    }

    /// The connection is gone, and with it the session the invitations belonged to: every pending one fails
    /// (the server fails them for the other side when it sees the session close).
    mutating func connectionLost() -> [InvitationEvent] {
        var events: [InvitationEvent] = []
        for id in local.keys.sorted() {
            guard var invitation = local[id] else { continue }
            invitation.state = .failure(.notLoggedIn)
            events.append(.localInvitationFailure(invitation, .notLoggedIn))
        }
        for id in remote.keys.sorted() {
            guard var invitation = remote[id] else { continue }
            invitation.state = .failure(.peerOffline)
            events.append(.remoteInvitationFailure(invitation, .peerOffline))
        }
        local = [:]
        remote = [:]
        return events
    }
}
