import CallAPISignalProtocol

/// The server's arbitration of call invitations (Agora RTM v1's model, docs/invitations.md), as a pure state
/// machine: it decides every ending and tells both sides, so that they agree even when one of them vanishes.
///
/// An invitation belongs to the session that sent it and is handed to every session of the callee. The callee's
/// client acknowledges receipt at once; one of its sessions may accept or refuse; the caller may cancel. An accept
/// completes only when the caller's client acknowledges it. Windows (``InvitationLimits``) bound each wait. The
/// only actions are frames to sessions. In a cluster the caller's node arbitrates: the callee's sessions on other
/// nodes are ``InvitationEndpoint/remote(node:session:)``, reached and heard through their nodes.
package struct InvitationMachine: Sendable {
    let limits: InvitationLimits
    private(set) var pending: [String: PendingInvitation] = [:]
    /// The pending invitations each session is part of (as caller or callee), to end them when it closes.
    private var involving: [InvitationEndpoint: Set<String>] = [:]
    /// Pending invitations by callee user.
    private var perCallee: [String: Int] = [:]
    /// What every invitation id begins with: `i-` on a single node; in a cluster, one that no other node or earlier
    /// run uses, since other nodes find an invitation's sessions by its id.
    private let idPrefix: String
    private var nextNumber: UInt64 = 1

    package init(limits: InvitationLimits, idPrefix: String = "i-") {
        self.limits = limits
        self.idPrefix = idPrefix
    }

    /// Applies `input`, which happened at `now` (ms since 1970 on the server's clock), and returns the frames to send.
    package mutating func handle(_ input: InvitationInput, now: Int64) -> [InvitationAction] {
        var actions: [InvitationAction] = []
        handle(input, now: now, into: &actions)
        return actions
    }

    /// Applies `input` at `now`, appending its frames to `actions` in order.
    package mutating func handle(
        _ input: InvitationInput, now: Int64, into actions: inout [InvitationAction]
    ) {
        func send(_ frame: ServerFrame, to endpoint: InvitationEndpoint) { actions.append(.send(endpoint, frame)) }
        switch input {
        case .invite(let session, let caller, let invite, let calleeSessions):
            start(invite, from: session, caller: caller, calleeSessions: calleeSessions, now: now, send)
        case .received(let session, let ref):
            received(ref, by: session, send)
        case .accept(let session, let reply):
            accept(reply, by: session, now: now, send)
        case .refuse(let session, let reply):
            refuse(reply, by: session, send)
        case .cancel(let session, let ref):
            cancel(ref, by: session, send)
        case .acknowledgeAccept(let session, let ref):
            acknowledgeAccept(ref, by: session, send)
        case .sessionClosed(let endpoint):
            sessionClosed(endpoint, send)
        case .remoteSessionsGone(let node, let user):
            let gone = involving.keys.filter { $0.isRemote(node: node, user: user) }
            for endpoint in gone.sorted() { sessionClosed(endpoint, send) }
        case .tick:
            tick(now: now, send)
        }
    }

    /// Where a handler sends a frame: appended to the actions, in order.
    private typealias Send = (ServerFrame, InvitationEndpoint) -> Void

    // MARK: - Caller

    private mutating func start(
        _ invite: ClientFrame.Invite, from session: SessionID, caller: String, calleeSessions: [InvitationEndpoint],
        now: Int64, _ send: Send
    ) {
        let from = InvitationEndpoint.local(session)
        func refuse(_ code: SignalErrorCode, _ message: String) {
            send(.error(.init(id: invite.id, code: code, message: message)), from)
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
        let sent = (involving[from] ?? []).filter { pending[$0]?.callerSession == session }.count
        guard sent < limits.maxPerCaller else {
            return refuse(.tooManyInvitations, "this session already has \(sent) pending invitations, the most allowed")
        }
        let waiting = perCallee[invite.to] ?? 0
        guard waiting < limits.maxPerCallee else {
            return refuse(
                .tooManyInvitations, "user \(invite.to) already has \(waiting) pending invitations, the most allowed")
        }
        let invitationId = "\(idPrefix)\(nextNumber)"
        nextNumber += 1
        guard !calleeSessions.isEmpty else {
            // The server knows presence, so an offline callee fails the invitation at once.
            let failure = ServerFrame.LocalInvitation(
                id: invite.id, invitationId: invitationId, calleeId: invite.to, state: .failure, reason: .peerOffline)
            return send(.localInvitation(failure), from)
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
        send(invitation.local(.sentToRemote, id: invite.id), from)
        for callee in calleeSessions { send(offer, callee) }
    }

    private mutating func cancel(_ ref: ClientFrame.InvitationRef, by session: SessionID, _ send: Send) {
        guard let invitation = pending[ref.invitationId], invitation.callerSession == session else {
            return send(notFound(ref.invitationId, requestId: ref.id), .local(session))
        }
        if case .acceptSent = invitation.stage {
            return send(alreadyAccepted(ref.invitationId, requestId: ref.id), .local(session))
        }
        end(invitation)
        send(invitation.local(.canceled, id: ref.id), .local(session))
        for callee in invitation.calleeSessions { send(invitation.remote(.canceled), callee) }
    }

    private mutating func acknowledgeAccept(_ ref: ClientFrame.InvitationRef, by session: SessionID, _ send: Send) {
        guard let invitation = pending[ref.invitationId], invitation.callerSession == session,
            case .acceptSent(_, let response, _) = invitation.stage
        else {
            return send(notFound(ref.invitationId, requestId: ref.id), .local(session))
        }
        end(invitation)
        send(invitation.local(.acceptedByRemote, id: ref.id, response: response), .local(session))
        for callee in invitation.calleeSessions { send(invitation.remote(.accepted, response: response), callee) }
    }

    // MARK: - Callee

    private mutating func received(_ ref: ClientFrame.InvitationRef, by session: InvitationEndpoint, _ send: Send) {
        // A receipt is a notice, not a request: a late or repeated one (another device) is ignored.
        guard var invitation = pending[ref.invitationId], invitation.calleeSessions.contains(session),
            case .sent = invitation.stage
        else { return }
        invitation.stage = .received(expiresAt: invitation.expiresAt)
        pending[ref.invitationId] = invitation
        send(invitation.local(.receivedByRemote), .local(invitation.callerSession))
    }

    private mutating func accept(
        _ reply: ClientFrame.InvitationReply, by session: InvitationEndpoint, now: Int64, _ send: Send
    ) {
        guard var invitation = pending[reply.invitationId], invitation.calleeSessions.contains(session) else {
            return send(notFound(reply.invitationId, requestId: reply.id), session)
        }
        if let problem = Self.contentProblem(reply.response, field: "response") {
            return send(.error(.init(id: reply.id, code: .invalidFrame, message: problem)), session)
        }
        switch invitation.stage {
        case .acceptSent:
            return send(alreadyAccepted(reply.invitationId, requestId: reply.id), session)
        case .sent:
            // Accepting implies having received it: the caller hears both, in order.
            send(invitation.local(.receivedByRemote), .local(invitation.callerSession))
        case .received:
            break
        }
        invitation.stage = .acceptSent(by: session, response: reply.response, deadline: now + limits.acceptWindowMillis)
        pending[reply.invitationId] = invitation
        send(invitation.remote(.acceptSentToLocal, id: reply.id, response: reply.response), session)
        send(invitation.local(.acceptPending, response: reply.response), .local(invitation.callerSession))
    }

    private mutating func refuse(_ reply: ClientFrame.InvitationReply, by session: InvitationEndpoint, _ send: Send) {
        guard let invitation = pending[reply.invitationId], invitation.calleeSessions.contains(session) else {
            return send(notFound(reply.invitationId, requestId: reply.id), session)
        }
        if let problem = Self.contentProblem(reply.response, field: "response") {
            return send(.error(.init(id: reply.id, code: .invalidFrame, message: problem)), session)
        }
        if case .acceptSent = invitation.stage {
            return send(alreadyAccepted(reply.invitationId, requestId: reply.id), session)
        }
        end(invitation)
        // Every session of the callee hears the ending; the one that refused gets it as its answer.
        send(invitation.local(.refusedByRemote, response: reply.response), .local(invitation.callerSession))
        for callee in invitation.calleeSessions {
            send(invitation.remote(.refused, id: callee == session ? reply.id : nil, response: reply.response), callee)
        }
    }

    // MARK: - Endings nobody asked for

    private mutating func sessionClosed(_ session: InvitationEndpoint, _ send: Send) {
        for invitationId in (involving.removeValue(forKey: session) ?? []).sorted() {
            guard var invitation = pending[invitationId] else { continue }
            if .local(invitation.callerSession) == session {
                end(invitation)
                for callee in invitation.calleeSessions {
                    send(invitation.remote(.failure, reason: .peerOffline), callee)
                }
                continue
            }
            invitation.calleeSessions.removeAll { $0 == session }
            if invitation.calleeSessions.isEmpty {
                end(invitation)
                send(invitation.local(.failure, reason: .peerOffline), .local(invitation.callerSession))
            } else {
                pending[invitationId] = invitation
            }
        }
    }

    private mutating func tick(now: Int64, _ send: Send) {
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
            send(invitation.local(.failure, reason: reasons.caller), .local(invitation.callerSession))
            for callee in invitation.calleeSessions {
                send(invitation.remote(.failure, reason: reasons.callee), callee)
            }
        }
    }

    // MARK: - Bookkeeping

    private mutating func add(_ invitation: PendingInvitation) {
        pending[invitation.invitationId] = invitation
        perCallee[invitation.callee, default: 0] += 1
        for session in [InvitationEndpoint.local(invitation.callerSession)] + invitation.calleeSessions {
            involving[session, default: []].insert(invitation.invitationId)
        }
    }

    private mutating func end(_ invitation: PendingInvitation) {
        pending[invitation.invitationId] = nil
        let waiting = (perCallee[invitation.callee] ?? 1) - 1
        perCallee[invitation.callee] = waiting > 0 ? waiting : nil
        for session in [InvitationEndpoint.local(invitation.callerSession)] + invitation.calleeSessions {
            involving[session]?.remove(invitation.invitationId)
            if involving[session]?.isEmpty == true { involving[session] = nil }
        }
    }

    private func notFound(_ invitationId: String, requestId: Int?) -> ServerFrame {
        .error(
            .init(
                id: requestId, code: .invitationNotFound,
                message: "no pending invitation \(invitationId) for this session: unknown, ended, or not yours"))
    }

    private func alreadyAccepted(_ invitationId: String, requestId: Int?) -> ServerFrame {
        .error(
            .init(
                id: requestId, code: .invitationAlreadyAccepted,
                message: "invitation \(invitationId) was already accepted"))
    }

    private static func contentProblem(_ text: String?, field: String) -> String? {
        guard let bytes = text?.utf8.count, bytes > InvitationProtocol.maxContentBytes else { return nil }
        return "\"\(field)\" is \(bytes) bytes; the limit is \(InvitationProtocol.maxContentBytes)"
    }
}
