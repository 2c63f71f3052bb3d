import CallAPISignalProtocol

/// The server's arbitration of call invitations (Agora RTM v1's model, docs/invitations.md), as a pure state
/// machine: it decides every ending and tells both sides, so that they agree even when one of them vanishes.
///
/// An invitation belongs to the session that sent it and is handed to every session of the callee. The callee's
/// client acknowledges receipt at once; one of its sessions may accept or refuse; the caller may cancel. An accept
/// completes only when the caller's client acknowledges it. Windows (``InvitationLimits``) bound each wait. The
/// only actions are frames to sessions.
package struct InvitationMachine: Sendable {
    let limits: InvitationLimits
    private(set) var pending: [String: PendingInvitation] = [:]
    /// The pending invitations each session is part of (as caller or callee), to end them when it closes.
    private var involving: [SessionID: Set<String>] = [:]
    /// Pending invitations by callee user.
    private var perCallee: [String: Int] = [:]
    private var nextNumber: UInt64 = 1

    package init(limits: InvitationLimits) {
        self.limits = limits
    }

    /// Applies `input`, which happened at `now` (ms since 1970 on the server's clock), and returns the frames to send.
    package mutating func handle(_ input: InvitationInput, now: Int64) -> [HubAction] {
        switch input {
        case .invite(let session, let caller, let invite, let calleeSessions):
            return start(invite, from: session, caller: caller, calleeSessions: calleeSessions, now: now)
        case .received(let session, let ref):
            return received(ref, by: session)
        case .accept(let session, let reply):
            return accept(reply, by: session, now: now)
        case .refuse(let session, let reply):
            return refuse(reply, by: session)
        case .cancel(let session, let ref):
            return cancel(ref, by: session)
        case .acknowledgeAccept(let session, let ref):
            return acknowledgeAccept(ref, by: session)
        case .sessionClosed(let session):
            return sessionClosed(session)
        case .tick:
            return tick(now: now)
        }
    }

    // MARK: - Caller

    private mutating func start(
        _ invite: ClientFrame.Invite, from session: SessionID, caller: String, calleeSessions: [SessionID],
        now: Int64
    ) -> [HubAction] {
        func refuse(_ code: SignalErrorCode, _ message: String) -> [HubAction] {
            [.send(session, .error(.init(id: invite.id, code: code, message: message)))]
        }
        guard SignalProtocol.isValidUserId(invite.to) else {
            return refuse(.invalidTarget, "\"to\" must be 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        guard invite.to != caller else {
            return refuse(.invalidTarget, "a user cannot invite itself")
        }
        if let problem = Self.contentProblem(invite.content, field: "content") {
            return refuse(.invalidFrame, problem)
        }
        if let channelId = invite.channelId, channelId.count > InvitationProtocol.maxChannelIdLength {
            return refuse(
                .invalidFrame,
                "\"channelId\" is \(channelId.count) characters; the limit is \(InvitationProtocol.maxChannelIdLength)"
            )
        }
        let sent = (involving[session] ?? []).filter { pending[$0]?.callerSession == session }.count
        guard sent < limits.maxPerCaller else {
            return refuse(.tooManyInvitations, "this session already has \(sent) pending invitations, the most allowed")
        }
        let waiting = perCallee[invite.to] ?? 0
        guard waiting < limits.maxPerCallee else {
            return refuse(
                .tooManyInvitations, "user \(invite.to) already has \(waiting) pending invitations, the most allowed")
        }
        let invitationId = "i-\(nextNumber)"
        nextNumber += 1
        guard !calleeSessions.isEmpty else {
            // The server knows presence, so an offline callee fails the invitation at once.
            let failure = ServerFrame.LocalInvitation(
                id: invite.id, invitationId: invitationId, calleeId: invite.to, state: .failure, reason: .peerOffline)
            return [.send(session, .localInvitation(failure))]
        }
        let invitation = PendingInvitation(
            invitationId: invitationId, caller: caller, callerSession: session, callee: invite.to,
            calleeSessions: calleeSessions, expiresAt: now + limits.expiryMillis,
            stage: .sent(receiveDeadline: now + limits.receiveWindowMillis))
        add(invitation)
        let offer = ServerFrame.remoteInvitation(
            .init(
                invitationId: invitationId, callerId: caller, state: .invitationReceived,
                content: invite.content ?? "", channelId: invite.channelId ?? "", expiresAt: invitation.expiresAt))
        return [.send(session, invitation.local(.sentToRemote, id: invite.id))]
            + calleeSessions.map { .send($0, offer) }
    }

    private mutating func cancel(_ ref: ClientFrame.InvitationRef, by session: SessionID) -> [HubAction] {
        guard let invitation = pending[ref.invitationId], invitation.callerSession == session else {
            return notFound(ref.invitationId, requestId: ref.id, session)
        }
        if case .acceptSent = invitation.stage {
            return alreadyAccepted(ref.invitationId, requestId: ref.id, session)
        }
        end(invitation)
        return [.send(session, invitation.local(.canceled, id: ref.id))]
            + invitation.calleeSessions.map { .send($0, invitation.remote(.canceled)) }
    }

    private mutating func acknowledgeAccept(_ ref: ClientFrame.InvitationRef, by session: SessionID) -> [HubAction] {
        guard let invitation = pending[ref.invitationId], invitation.callerSession == session,
            case .acceptSent(_, let response, _) = invitation.stage
        else {
            return notFound(ref.invitationId, requestId: ref.id, session)
        }
        end(invitation)
        return [.send(session, invitation.local(.acceptedByRemote, id: ref.id, response: response))]
            + invitation.calleeSessions.map { .send($0, invitation.remote(.accepted, response: response)) }
    }

    // MARK: - Callee

    private mutating func received(_ ref: ClientFrame.InvitationRef, by session: SessionID) -> [HubAction] {
        // A receipt is a notice, not a request: a late or repeated one (another device) is ignored.
        guard var invitation = pending[ref.invitationId], invitation.calleeSessions.contains(session),
            case .sent = invitation.stage
        else { return [] }
        invitation.stage = .received(expiresAt: invitation.expiresAt)
        pending[ref.invitationId] = invitation
        return [.send(invitation.callerSession, invitation.local(.receivedByRemote))]
    }

    private mutating func accept(_ reply: ClientFrame.InvitationReply, by session: SessionID, now: Int64)
        -> [HubAction]
    {
        guard var invitation = pending[reply.invitationId], invitation.calleeSessions.contains(session) else {
            return notFound(reply.invitationId, requestId: reply.id, session)
        }
        if let problem = Self.contentProblem(reply.response, field: "response") {
            return [.send(session, .error(.init(id: reply.id, code: .invalidFrame, message: problem)))]
        }
        var receipt: [HubAction] = []
        switch invitation.stage {
        case .acceptSent:
            return alreadyAccepted(reply.invitationId, requestId: reply.id, session)
        case .sent:
            // Accepting implies having received it: the caller hears both, in order.
            receipt = [.send(invitation.callerSession, invitation.local(.receivedByRemote))]
        case .received:
            break
        }
        invitation.stage = .acceptSent(by: session, response: reply.response, deadline: now + limits.acceptWindowMillis)
        pending[reply.invitationId] = invitation
        return receipt + [
            .send(session, invitation.remote(.acceptSentToLocal, id: reply.id, response: reply.response)),
            .send(invitation.callerSession, invitation.local(.acceptPending, response: reply.response)),
        ]
    }

    private mutating func refuse(_ reply: ClientFrame.InvitationReply, by session: SessionID) -> [HubAction] {
        guard let invitation = pending[reply.invitationId], invitation.calleeSessions.contains(session) else {
            return notFound(reply.invitationId, requestId: reply.id, session)
        }
        if let problem = Self.contentProblem(reply.response, field: "response") {
            return [.send(session, .error(.init(id: reply.id, code: .invalidFrame, message: problem)))]
        }
        if case .acceptSent = invitation.stage {
            return alreadyAccepted(reply.invitationId, requestId: reply.id, session)
        }
        end(invitation)
        // Every session of the callee hears the ending; the one that refused gets it as its answer.
        return [.send(invitation.callerSession, invitation.local(.refusedByRemote, response: reply.response))]
            + invitation.calleeSessions.map {
                .send($0, invitation.remote(.refused, id: $0 == session ? reply.id : nil, response: reply.response))
            }
    }

    // MARK: - Endings nobody asked for

    private mutating func sessionClosed(_ session: SessionID) -> [HubAction] {
        var actions: [HubAction] = []
        for invitationId in (involving.removeValue(forKey: session) ?? []).sorted() {
            guard var invitation = pending[invitationId] else { continue }
            if invitation.callerSession == session {
                end(invitation)
                actions += invitation.calleeSessions.map {
                    .send($0, invitation.remote(.failure, reason: .peerOffline))
                }
                continue
            }
            invitation.calleeSessions.removeAll { $0 == session }
            if invitation.calleeSessions.isEmpty {
                end(invitation)
                actions.append(.send(invitation.callerSession, invitation.local(.failure, reason: .peerOffline)))
            } else {
                pending[invitationId] = invitation
            }
        }
        return actions
    }

    private mutating func tick(now: Int64) -> [HubAction] {
        var actions: [HubAction] = []
        for invitationId in pending.keys.sorted() {
            guard let invitation = pending[invitationId] else { continue }
            let reasons: (caller: InvitationFailureReason, callee: InvitationFailureReason)? =
                switch invitation.stage {
                case .sent(let deadline) where now >= deadline: (.peerNoResponse, .invitationExpire)
                case .received(let expiresAt) where now >= expiresAt: (.invitationExpire, .invitationExpire)
                case .acceptSent(_, _, let deadline) where now >= deadline: (.acceptFailure, .acceptFailure)
                default: nil
                }
            guard let reasons else { continue }
            end(invitation)
            actions.append(.send(invitation.callerSession, invitation.local(.failure, reason: reasons.caller)))
            actions += invitation.calleeSessions.map {
                .send($0, invitation.remote(.failure, reason: reasons.callee))
            }
        }
        return actions
    }

    // MARK: - Bookkeeping

    private mutating func add(_ invitation: PendingInvitation) {
        pending[invitation.invitationId] = invitation
        perCallee[invitation.callee, default: 0] += 1
        for session in [invitation.callerSession] + invitation.calleeSessions {
            involving[session, default: []].insert(invitation.invitationId)
        }
    }

    private mutating func end(_ invitation: PendingInvitation) {
        pending[invitation.invitationId] = nil
        let waiting = (perCallee[invitation.callee] ?? 1) - 1
        perCallee[invitation.callee] = waiting > 0 ? waiting : nil
        for session in [invitation.callerSession] + invitation.calleeSessions {
            involving[session]?.remove(invitation.invitationId)
            if involving[session]?.isEmpty == true { involving[session] = nil }
        }
    }

    private func notFound(_ invitationId: String, requestId: Int?, _ session: SessionID) -> [HubAction] {
        [
            .send(
                session,
                .error(
                    .init(
                        id: requestId, code: .invitationNotFound,
                        message: "no pending invitation \(invitationId) for this session: unknown, ended, or not yours")
                ))
        ]
    }

    private func alreadyAccepted(_ invitationId: String, requestId: Int?, _ session: SessionID) -> [HubAction] {
        [
            .send(
                session,
                .error(
                    .init(
                        id: requestId, code: .invitationAlreadyAccepted,
                        message: "invitation \(invitationId) was already accepted")))
        ]
    }

    private static func contentProblem(_ text: String?, field: String) -> String? {
        guard let bytes = text?.utf8.count, bytes > InvitationProtocol.maxContentBytes else { return nil }
        return "\"\(field)\" is \(bytes) bytes; the limit is \(InvitationProtocol.maxContentBytes)"
    }
}
