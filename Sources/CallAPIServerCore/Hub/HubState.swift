import CallAPISignalProtocol

/// The signaling hub as a pure state machine: sessions, who is online, held messages and rate limits.
///
/// Feed it ``HubEvent``s with the current time; it returns the ``HubAction``s to perform. No I/O, no clock.
package struct HubState: Sendable {
    package let limits: HubLimits
    /// The connections: table, order, deadlines, outboxes and rate limit.
    package internal(set) var sessions: Sessions<Phase, RelayedMessage>
    /// Who is online, and who hears of it.
    var presence = Presence()
    /// Messages held for offline users, with the counts their limits are checked against.
    var held = HeldMessages()
    /// Calls that ring a user's sessions and were pushed to that user's devices with no session.
    var ringing = RingingPushes()
    /// Messages held for offline users, and their body bytes (as JSON carries them).
    package var heldCount: Int { held.count }
    package var heldBytes: Int { held.bytes }
    /// Frames and bytes queued for all sessions' writers.
    package var queuedFrames: Int { sessions.queuedFrames }
    package var queuedBytes: Int { sessions.queuedBytes }
    var nextMessageNumber: Int64 = 1
    var isShuttingDown = false
    /// Push devices by user, and how calls are pushed and withdrawn.
    package internal(set) var devices: DeviceRegistry
    package let pushPolicy: PushPolicy

    /// Call invitations the hub arbitrates.
    var invitations: InvitationMachine
    /// Invitations other nodes arbitrate whose callee has sessions here (only on a node of a cluster).
    var remoteInvitations = RemoteInvitations()
    /// The match queue and server-placed calls (docs/match.md; routed in HubState+Match.swift).
    var match: MatchMachine
    /// On a node of a cluster, whose match queue is in the database: the sessions here that entered it and may
    /// still wait (their closing takes them out).
    var matchEntrants: Set<SessionID> = []

    /// Whether ``relay`` reports each `send` it handled (``HubAction/relayed(_:)``), for the call ledger.
    package let reportsRelays: Bool
    /// Alone, or one node of a cluster (docs/scale-out.md).
    package let topology: HubTopology
    /// What every message id starts with: unique to the node in a cluster.
    let messageIdPrefix: [UInt8]

    /// `runId` is in the ids of matches and (on a node of a cluster) of invitations: the shell makes it random per
    /// run.
    package init(
        limits: HubLimits, pushPolicy: PushPolicy = PushPolicy(), devices: DeviceRegistry = DeviceRegistry(),
        reportsRelays: Bool = false, runId: String = "m", topology: HubTopology = .single
    ) {
        self.topology = topology
        messageIdPrefix =
            switch topology {
            case .single: Array("m-".utf8)
            case .node(let node): Array("m-\(node)-".utf8)
            }
        self.limits = limits
        sessions = Sessions(
            rateLimit: RateLimit(
                ratePerSecond: limits.ratePerSecond, burst: limits.burst, maxRefusalsInARow: limits.maxRefusalsInARow),
            maxOutboxFrames: limits.maxOutboxFrames, maxOutboxBytes: limits.maxOutboxBytes)
        self.pushPolicy = pushPolicy
        self.devices = devices
        self.reportsRelays = reportsRelays
        invitations = InvitationMachine(
            limits: limits.invitations,
            // On a node of a cluster, ids the other nodes find the invitation by: this node's and this run's.
            idPrefix: topology == .single ? "i-" : "i-\(runId)-")
        match = MatchMachine(limits: limits.match, idPrefix: runId)
    }

    /// Users with at least one logged-in session, sorted.
    package var onlineUsers: [String] { presence.onlineUsers }
    /// Every logged-in session on this node with its user and push device, by user id then login order.
    package var loggedInSessions: [SessionRow] {
        presence.loggedInSessions.map { id, user in
            SessionRow(session: id, userId: user, device: sessions[id]?.login?.deviceId)
        }
    }
    /// How many users have a logged-in session (without sorting them: the hub reads this after every event).
    package var onlineUserCount: Int { presence.onlineUserCount }
    /// Open connections, logged in or not.
    package var sessionCount: Int { sessions.count }
    /// Whether session `id` is open in `state`. For the shell, which asks after every frame: static over `inout`
    /// because a method called from another module copied the whole state (656 bytes) to pass it as `self`
    /// (scripts/callgrind_relay.sh). `inout` only lends it; nothing is changed.
    package static func isOpen(_ id: SessionID, in state: inout HubState) -> Bool {
        state.sessions.index(forKey: id) != nil
    }
    /// Frames and estimated bytes queued for a session's writer and not yet written.
    package func outbox(of session: SessionID) -> (frames: Int, bytes: Int)? {
        sessions[session].map { ($0.outbox.frames, $0.outbox.bytes) }
    }
    /// The user a session is logged in as.
    package func userId(of session: SessionID) -> String? {
        // One look-up on the path of every relayed message; the phase is read without copying the session.
        guard let index = sessions.index(forKey: session), case .loggedIn(let login) = sessions.phase(at: index)
        else { return nil }
        return login.userId
    }

    // MARK: - Events

    /// Applies `event`, which happened at `now` (ms since 1970 on the server's clock), and returns what to do.
    package mutating func handle(_ event: HubEvent, now: Int64) -> [HubAction] {
        var actions: [HubAction] = []
        handle(event, now: now, into: &actions)
        return actions
    }

    /// Applies `event` at `now`, appending what to do to `actions` (a buffer the caller may reuse).
    ///
    /// Every frame is counted against its receiver's outbox where it is produced (``enqueue(_:to:into:)``); a
    /// session found too slow is closed once the event's other steps are done, as its last actions.
    package mutating func handle(_ event: consuming HubEvent, now: Int64, into actions: inout [HubAction]) {
        if case .written(let id, let frames) = event {
            sessions.written(frames, by: id)
            return
        }
        apply(consume event, now: now, into: &actions)
        while let id = sessions.nextSlowConsumer() { dropSlowConsumer(id, now: now, into: &actions) }
    }

    mutating func apply(_ event: consuming HubEvent, now: Int64, into actions: inout [HubAction]) {
        switch consume event {
        case .connected(let id):
            connect(id, now: now, into: &actions)
        case .frame(let id, let frame):
            receive(frame, from: id, now: now, into: &actions)
        case .undecodable(let id, let error):
            let isSend = error.type == ClientFrame.Kind.send.rawValue
            if admit(id, now: now, requestId: error.requestId, isSend: isSend, into: &actions) {
                refuse(id, requestId: error.requestId, isSend: isSend, error.code, error.message, into: &actions)
            }
        case .oversized(let id, let bytes, let requestId, let isSend):
            if admit(id, now: now, requestId: requestId, isSend: isSend, into: &actions) {
                refuse(
                    id, requestId: requestId, isSend: isSend, .tooLarge,
                    "the frame is \(bytes) bytes; the limit is \(limits.maxFrameBytes)", into: &actions)
            }
        case .binary(let id):
            if admit(id, now: now, requestId: nil, isSend: false, into: &actions) {
                refuse(
                    id, requestId: nil, isSend: false, .binaryNotSupported, "send frames as JSON text messages",
                    into: &actions)
            }
        case .tokenChecked(let id, let requestId, let purpose, let result):
            tokenChecked(id, requestId: requestId, purpose: purpose, result: result, now: now, into: &actions)
        case .written:
            break  // handled in `handle`
        case .disconnected(let id):
            remove(id, now: now, into: &actions)
        case .answeredOnBehalf(let id, let send, let body):
            answerOnBehalf(id, send, body: body, now: now, into: &actions)
        case .ringAbandoned(let ring):
            endAbandonedRing(ring, now: now, into: &actions)
        case .ledgerAnswered(let id, let frame):
            // The session may have gone while the ledger was read.
            if sessions[id] != nil { enqueue(frame, to: id, into: &actions) }
        case .tick:
            tick(now: now, into: &actions)
        case .shutdown:
            isShuttingDown = true
            for id in sessions.order {
                close(
                    id, .serverShutdown, "the server is shutting down; reconnect in a moment", now: now, into: &actions)
            }
        case .pushRejected(let userId, let deviceId, let token):
            if devices.removeRejected(deviceId: deviceId, of: userId, token: token) {
                devicesChanged(of: [userId], into: &actions)
            }
        case .removeDevice(let userId, let deviceId):
            if devices.remove(deviceId: deviceId, of: userId) { devicesChanged(of: [userId], into: &actions) }
        case .placeCall(let order, let callId):
            placeCall(order, callId: callId, now: now, into: &actions)
        case .cluster(let event):
            clusterReported(event, now: now, into: &actions)
        }
    }

    mutating func connect(_ id: SessionID, now: Int64, into actions: inout [HubAction]) {
        let waiting = sessions.count - presence.loggedInSessionCount
        guard sessions.open(id, phase: .awaitingLogin, now: now) else { return }
        scheduleTick(for: id)
        if isShuttingDown {
            close(id, .serverShutdown, "the server is shutting down; reconnect in a moment", now: now, into: &actions)
        } else if waiting >= limits.maxUnauthenticated {
            close(
                id, .serverBusy, "\(waiting) connections are already waiting to log in, the most allowed; retry soon",
                now: now, into: &actions)
        }
    }

    /// Counts a frame against the session's rate limit. Returns whether to process the frame; when not, what to do
    /// instead has been appended (nothing for an unknown session, a refusal over the limit).
    mutating func admit(
        _ id: SessionID, now: Int64, requestId: Int?, isSend: Bool, into actions: inout [HubAction]
    ) -> Bool {
        switch sessions.admit(id, now: now) {
        case .admitted:
            return true
        case .unknownSession, .dropQuietly:
            return false
        case .refuseFirst(let message):
            refuse(id, requestId: requestId, isSend: isSend, .rateLimited, message, into: &actions)
            return false
        case .close(let message):
            close(id, .rateLimited, message + "; closing", now: now, into: &actions)
            return false
        }
    }

    /// An `answer` (for sends) or `error` frame.
    mutating func refuse(
        _ id: SessionID, requestId: Int?, isSend: Bool, _ code: SignalErrorCode, _ message: String,
        into actions: inout [HubAction]
    ) {
        if isSend {
            enqueue(
                .answer(.init(id: requestId, result: .failed, reason: code, message: message)), to: id, into: &actions)
        } else {
            enqueue(.error(.init(id: requestId, code: code, message: message)), to: id, into: &actions)
        }
    }

    mutating func receive(
        _ frame: ClientFrame, from id: SessionID, now: Int64, into actions: inout [HubAction]
    ) {
        let isSend = if case .send = frame { true } else { false }
        if admit(id, now: now, requestId: frame.requestId, isSend: isSend, into: &actions) {
            process(frame, from: id, now: now, into: &actions)
        }
    }

    mutating func process(
        _ frame: ClientFrame, from id: SessionID, now: Int64, into actions: inout [HubAction]
    ) {
        guard let index = sessions.index(forKey: id) else { return }
        if case .login(let login) = frame {
            startLogin(id, session: sessions[at: index], login, into: &actions)
            return
        }
        guard let login = sessions.read(at: index, { $0.login }) else {
            let isSend = if case .send = frame { true } else { false }
            refuse(
                id, requestId: frame.requestId, isSend: isSend, .notLoggedIn,
                "log in first: send {\"type\":\"login\",\"token\":\"...\"}", into: &actions)
            return
        }
        if login.lease.isExpired(at: now) {
            let isSend = if case .send = frame { true } else { false }
            refuse(
                id, requestId: frame.requestId, isSend: isSend, .tokenExpired, "the session's token expired",
                into: &actions)
            close(id, .tokenExpired, "the token expired; log in again with a new token", now: now, into: &actions)
            return
        }
        switch frame {
        case .login:
            break  // handled above
        case .send(let send):
            placedCallSent(send, from: login.userId, now: now, into: &actions)
            relay(send, from: id, user: login.userId, now: now, into: &actions)
        case .renew(let renew):
            var renewing = login
            guard renewing.lease.startRenewal() else {
                refuse(
                    id, requestId: renew.id, isSend: false, .invalidFrame, "a token check is already running",
                    into: &actions)
                return
            }
            sessions.setPhase(.loggedIn(renewing), of: id)
            actions.append(.verifyToken(id, requestId: renew.id, token: renew.token, purpose: .renew))
        case .users(let request):
            enqueue(.presence(.init(id: request.id, online: onlineUsers)), to: id, into: &actions)
        case .subscribe(let request):
            presence.subscribe(id)
            enqueue(.presence(.init(id: request.id, online: onlineUsers)), to: id, into: &actions)
        case .unsubscribe(let request):
            presence.unsubscribe(id)
            enqueue(.presence(.init(id: request.id, online: onlineUsers)), to: id, into: &actions)
        case .ping(let request):
            enqueue(.pong(.init(id: request.id, serverTime: now)), to: id, into: &actions)
        case .logout:
            close(id, .loggedOut, "logged out", now: now, into: &actions)
        case .calls(let request):
            guard reportsRelays else {
                refuse(
                    id, requestId: request.id, isSend: false, .invalidFrame, "the call ledger is off on this server",
                    into: &actions)
                return
            }
            actions.append(.queryCalls(id, userId: login.userId, request))
        case .report(let report):
            guard reportsRelays else {
                refuse(
                    id, requestId: report.id, isSend: false, .invalidFrame, "the call ledger is off on this server",
                    into: &actions)
                return
            }
            if let problem = report.problem(now: now) {
                refuse(id, requestId: report.id, isSend: false, .invalidFrame, problem, into: &actions)
                return
            }
            actions.append(.storeReport(id, StoredCallReport(userId: login.userId, receivedAt: now, report: report)))
        case .registerDevice(let request):
            let before = devices
            if let problem = devices.register(request.device, for: login.userId, now: now) {
                refuse(id, requestId: request.id, isSend: false, .invalidFrame, problem, into: &actions)
                return
            }
            enqueue(devicesFrame(of: login.userId, requestId: request.id), to: id, into: &actions)
            devicesChanged(of: usersWithChangedDevices(since: before), into: &actions)
        case .devices(let request):
            enqueue(devicesFrame(of: login.userId, requestId: request.id), to: id, into: &actions)
        case .removeDevice(let request):
            let removed = devices.remove(deviceId: request.deviceId, of: login.userId)
            enqueue(devicesFrame(of: login.userId, requestId: request.id), to: id, into: &actions)
            if removed { devicesChanged(of: [login.userId], into: &actions) }
        case .invite(let invite):
            let input = InvitationInput.invite(
                id, caller: login.userId, invite, calleeSessions: invitationEndpoints(of: invite.to))
            runInvitations(input, now: now, into: &actions)
        case .invitationReceived(let ref):
            if passInvitation(frame, ref.invitationId, from: id, into: &actions) { return }
            runInvitations(.received(.local(id), ref), now: now, into: &actions)
        case .acceptInvitation(let reply):
            if passInvitation(frame, reply.invitationId, from: id, into: &actions) { return }
            runInvitations(.accept(.local(id), reply), now: now, into: &actions)
        case .refuseInvitation(let reply):
            if passInvitation(frame, reply.invitationId, from: id, into: &actions) { return }
            runInvitations(.refuse(.local(id), reply), now: now, into: &actions)
        case .cancelInvitation(let ref):
            runInvitations(.cancel(id, ref), now: now, into: &actions)
        case .acknowledgeAccept(let ref):
            runInvitations(.acknowledgeAccept(id, ref), now: now, into: &actions)
        case .matchEnter(let enter):
            if case .node = topology { return enterClusterMatch(enter, from: id, user: login.userId, into: &actions) }
            runMatch(.enter(id, user: login.userId, enter), now: now, into: &actions)
        case .matchLeave(let request):
            if case .node = topology { return leaveClusterMatch(request, from: id, user: login.userId, into: &actions) }
            runMatch(.leave(id, user: login.userId, request), now: now, into: &actions)
        }
    }

    // MARK: - Presence and sessions

    mutating func presenceChanged(_ userId: String, online: Bool, into actions: inout [HubAction]) {
        let frame = ServerFrame.presenceChanged(.init(userId: userId, online: online))
        for id in presence.subscribers { enqueue(frame, to: id, into: &actions) }
    }

    /// Forgets a session; tells subscribers if its user went offline.
    mutating func remove(_ id: SessionID, now: Int64, into actions: inout [HubAction]) {
        guard let session = sessions.close(id) else { return }
        presence.unsubscribe(id)
        guard let userId = session.login?.userId else { return }
        let wentOffline = presence.loggedOut(id, as: userId)
        if case .node = topology { actions.append(.cluster(.offline(id, userId: userId))) }
        // The other side of its invitations hears of it before presence subscribers do.
        runInvitations(.sessionClosed(.local(id)), now: now, into: &actions)
        remoteInvitationSessionClosed(id, of: userId, into: &actions)
        runMatch(.sessionClosed(id), now: now, into: &actions)
        if matchEntrants.remove(id) != nil { actions.append(.cluster(.matchSessionClosed(id))) }
        if wentOffline {
            presenceChanged(userId, online: false, into: &actions)
        }
    }

    /// Closes a session: a `closing` frame, then the close. Its outbox is not counted: the session is forgotten
    /// at once, and the frame goes out however full the outbox is.
    mutating func close(
        _ id: SessionID, _ reason: SignalErrorCode, _ message: String, now: Int64, into actions: inout [HubAction]
    ) {
        guard sessions[id] != nil else { return }
        actions.append(.send(id, .closing(.init(reason: reason, message: message))))
        actions.append(.close(id, code: SignalCloseCode.code(for: reason), reason: reason))
        remove(id, now: now, into: &actions)
    }

    /// Runs the match machine and performs what it asks, in order.
    mutating func runMatch(_ input: MatchInput, now: Int64, into actions: inout [HubAction]) {
        for action in match.handle(input, now: now) {
            switch action {
            case .send(let session, let frame): enqueue(frame, to: session, into: &actions)
            case .callNotPlaced(let call): actions.append(.callNotPlaced(call))
            }
        }
    }

}
