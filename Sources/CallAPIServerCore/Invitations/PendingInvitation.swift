import CallAPISignalProtocol

/// An invitation the server is arbitrating: who is involved, and where it stands.
package struct PendingInvitation: Sendable, Equatable {
    /// Where it stands; each stage owns its deadline.
    enum Stage: Sendable, Equatable {
        /// Handed to the callee's sessions; none has acknowledged it by `receiveDeadline`.
        case sent(receiveDeadline: Int64)
        /// A callee session acknowledged it; it expires at `expiresAt` unless someone acts.
        case received(expiresAt: Int64)
        /// The callee's session `by` accepted with `response`; the caller must acknowledge by `deadline`.
        case acceptSent(by: InvitationEndpoint, response: String?, deadline: Int64)
    }

    var invitationId: String
    var caller: String
    /// The session that sent it: only it hears of the invitation, and it vanishing ends it.
    var callerSession: SessionID
    var callee: String
    /// The callee's sessions that were handed it and are still open (in a cluster, some may be on other nodes).
    var calleeSessions: [InvitationEndpoint]
    var expiresAt: Int64
    var stage: Stage

    /// The frame to the caller's session.
    func local(
        _ state: ServerFrame.LocalInvitation.State, id: Int? = nil, response: String? = nil,
        reason: InvitationFailureReason? = nil
    ) -> ServerFrame {
        let open = state == .sentToRemote || state == .receivedByRemote
        return .localInvitation(
            .init(
                id: id, invitationId: invitationId, calleeId: callee, state: state, response: response,
                reason: reason, expiresAt: open ? expiresAt : nil))
    }

    /// The frame to the callee's sessions.
    func remote(
        _ state: ServerFrame.RemoteInvitation.State, id: Int? = nil, response: String? = nil,
        reason: InvitationFailureReason? = nil
    ) -> ServerFrame {
        .remoteInvitation(
            .init(
                id: id, invitationId: invitationId, callerId: caller, state: state, response: response,
                reason: reason))
    }
}
