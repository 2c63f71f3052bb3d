import CallAPISignalProtocol

/// The signaling hub as a pure state machine: sessions, who is online, held messages and rate limits.
///
/// Feed it ``HubEvent``s with the current time; it returns the ``HubAction``s to perform. No I/O, no clock.
package struct HubState: Sendable {
    /// A relayed message in a session's outbox: whom to tell if it is never written.
    struct RelayedMessage: Sendable, Equatable {
        var from: String
        var to: String
        var messageId: String
    }

    /// A message kept for an offline user.
    struct HeldMessage: Sendable, Equatable {
        var messageId: String
        var from: String
        var body: String
        var sentAt: Int64
        var expiresAt: Int64
        /// The call id, when this is a call pushed to the user's devices.
        var pushedCall: String? = nil
    }

    package let limits: HubLimits
    private(set) var sessions: [SessionID: Session] = [:]
    /// Logged-in sessions by user, in login order.
    private(set) var userSessions: [String: [SessionID]] = [:]
    var held: [String: [HeldMessage]] = [:]
    /// Messages held for offline users, their body bytes, and how many each sender has held (kept as counts so
    /// that the limits are checked in O(1)).
    package private(set) var heldCount = 0
    package private(set) var heldBytes = 0
    private var heldBySender: [String: Int] = [:]
    /// Frames and bytes queued for all sessions' writers.
    package private(set) var queuedFrames = 0
    package private(set) var queuedBytes = 0
    private var loggedInSessionCount = 0
    private var nextMessageNumber: UInt64 = 1
    private(set) var isShuttingDown = false
    /// Push devices by user, and how calls are pushed and withdrawn.
    package internal(set) var devices: DeviceRegistry
    package let pushPolicy: PushPolicy
    /// Withdrawn pushed calls by callee, oldest first.
    var tombstones: [String: [Tombstone]] = [:]

    /// Call invitations the hub arbitrates.
    private(set) var invitations: InvitationMachine
    /// The match queue and server-placed calls (docs/match.md; routed in HubState+Match.swift).
    var match: MatchMachine

    /// Whether ``relay`` reports each `send` it handled (``HubAction/relayed(_:)``), for the call ledger.
    package let reportsRelays: Bool

    package init(
        limits: HubLimits, pushPolicy: PushPolicy = PushPolicy(), devices: DeviceRegistry = DeviceRegistry(),
        reportsRelays: Bool = false, matchIdPrefix: String = "m"
    ) {
        self.limits = limits
        self.pushPolicy = pushPolicy
        self.devices = devices
        self.reportsRelays = reportsRelays
        invitations = InvitationMachine(limits: limits.invitations)
        match = MatchMachine(limits: limits.match, idPrefix: matchIdPrefix)
    }

    /// Users with at least one logged-in session, sorted.
    package var onlineUsers: [String] { userSessions.keys.sorted() }
    /// How many users have a logged-in session (without sorting them: the hub reads this after every event).
    package var onlineUserCount: Int { userSessions.count }
    /// Open connections, logged in or not.
    package var sessionCount: Int { sessions.count }
    /// Frames and estimated bytes queued for a session's writer and not yet written.
    package func outbox(of session: SessionID) -> (frames: Int, bytes: Int)? {
        sessions[session].map { ($0.outbox.frames, $0.outbox.bytes) }
    }
    /// The user a session is logged in as.
    package func userId(of session: SessionID) -> String? { sessions[session]?.login?.userId }

    // MARK: - Events

    /// Applies `event`, which happened at `now` (ms since 1970 on the server's clock), and returns what to do.
    package mutating func handle(_ event: HubEvent, now: Int64) -> [HubAction] {
        if case .written(let id, let frames) = event {
            guard let before = sessions[id]?.outbox else { return [] }
            sessions[id]?.outbox.written(frames)
            queuedFrames -= before.frames - (sessions[id]?.outbox.frames ?? 0)
            queuedBytes -= before.bytes - (sessions[id]?.outbox.bytes ?? 0)
            return []
        }
        return queued(apply(event, now: now), now: now)
    }

    private mutating func apply(_ event: HubEvent, now: Int64) -> [HubAction] {
        switch event {
        case .connected(let id):
            return connect(id, now: now)
        case .frame(let id, let frame):
            return receive(frame, from: id, now: now)
        case .undecodable(let id, let error):
            let isSend = error.type == "send"
            return admit(id, now: now, requestId: error.requestId, isSend: isSend)
                ?? refuse(id, requestId: error.requestId, isSend: isSend, error.code, error.message)
        case .oversized(let id, let bytes, let requestId, let isSend):
            return admit(id, now: now, requestId: requestId, isSend: isSend)
                ?? refuse(
                    id, requestId: requestId, isSend: isSend, .tooLarge,
                    "the frame is \(bytes) bytes; the limit is \(limits.maxFrameBytes)")
        case .binary(let id):
            return admit(id, now: now, requestId: nil, isSend: false)
                ?? refuse(id, requestId: nil, isSend: false, .binaryNotSupported, "send frames as JSON text messages")
        case .tokenChecked(let id, let requestId, let purpose, let result):
            return tokenChecked(id, requestId: requestId, purpose: purpose, result: result, now: now)
        case .written:
            return []  // handled in `handle`
        case .disconnected(let id):
            return remove(id, now: now)
        case .answeredOnBehalf(let id, let send, let body):
            return answerOnBehalf(id, send, body: body, now: now)
        case .ledgerAnswered(let id, let frame):
            // The session may have gone while the ledger was read.
            return sessions[id] == nil ? [] : [.send(id, frame)]
        case .tick:
            return tick(now: now)
        case .shutdown:
            isShuttingDown = true
            return sessions.keys.sorted().flatMap {
                close($0, .serverShutdown, "the server is shutting down; reconnect in a moment", now: now)
            }
        case .pushRejected(let userId, let deviceId, let token):
            guard devices.removeRejected(deviceId: deviceId, of: userId, token: token) else { return [] }
            return [.push(.saveDevices(devices))]
        case .removeDevice(let userId, let deviceId):
            guard devices.remove(deviceId: deviceId, of: userId) else { return [] }
            return [.push(.saveDevices(devices))]
        case .placeCall(let order, let callId):
            return placeCall(order, callId: callId, now: now)
        }
    }

    private mutating func connect(_ id: SessionID, now: Int64) -> [HubAction] {
        let waiting = sessions.count - loggedInSessionCount
        sessions[id] = Session(connectedAt: now, lastSeen: now, bucket: TokenBucket(burst: limits.burst, now: now))
        if isShuttingDown {
            return close(id, .serverShutdown, "the server is shutting down; reconnect in a moment", now: now)
        }
        if waiting >= limits.maxUnauthenticated {
            return close(
                id, .serverBusy, "\(waiting) connections are already waiting to log in, the most allowed; retry soon",
                now: now)
        }
        return []
    }

    /// Counts a frame against the session's rate limit. Returns what to do instead of processing the frame
    /// (nothing for an unknown session, a refusal over the limit), or `nil` to process it.
    private mutating func admit(_ id: SessionID, now: Int64, requestId: Int?, isSend: Bool) -> [HubAction]? {
        guard var session = sessions[id] else { return [] }
        session.lastSeen = now
        let allowed = session.bucket.take(now: now, ratePerSecond: limits.ratePerSecond, burst: limits.burst)
        session.refusedInARow = allowed ? 0 : session.refusedInARow + 1
        sessions[id] = session
        guard allowed else {
            // Refusals are coalesced: only the first of a run is answered, so a flood that does not read its
            // socket cannot fill its own outbox with them; a run past the limit closes the session.
            if session.refusedInARow > limits.maxRefusalsInARow {
                return close(
                    id, .rateLimited, "\(session.refusedInARow) frames in a row over the rate limit; closing", now: now)
            }
            guard session.refusedInARow == 1 else { return [] }
            return refuse(
                id, requestId: requestId, isSend: isSend, .rateLimited,
                "more than \(limits.burst) frames at once or \(formatRate(limits.ratePerSecond)) per second; slow down "
                    + "(until you do, frames are refused without an answer)")
        }
        return nil
    }

    /// An `answer` (for sends) or `error` frame.
    private func refuse(
        _ id: SessionID, requestId: Int?, isSend: Bool, _ code: SignalErrorCode, _ message: String
    ) -> [HubAction] {
        if isSend {
            return [.send(id, .answer(.init(id: requestId, result: .failed, reason: code, message: message)))]
        }
        return [.send(id, .error(.init(id: requestId, code: code, message: message)))]
    }

    private mutating func receive(_ frame: ClientFrame, from id: SessionID, now: Int64) -> [HubAction] {
        let isSend = if case .send = frame { true } else { false }
        return admit(id, now: now, requestId: frame.requestId, isSend: isSend) ?? process(frame, from: id, now: now)
    }

    private mutating func process(_ frame: ClientFrame, from id: SessionID, now: Int64) -> [HubAction] {
        guard let session = sessions[id] else { return [] }
        if case .login(let login) = frame {
            return startLogin(id, session: session, login)
        }
        guard let login = session.login else {
            let isSend = if case .send = frame { true } else { false }
            return refuse(
                id, requestId: frame.requestId, isSend: isSend, .notLoggedIn,
                "log in first: send {\"type\":\"login\",\"token\":\"...\"}")
        }
        if login.lease.isExpired(at: now) {
            let isSend = if case .send = frame { true } else { false }
            return refuse(id, requestId: frame.requestId, isSend: isSend, .tokenExpired, "the session's token expired")
                + close(id, .tokenExpired, "the token expired; log in again with a new token", now: now)
        }
        switch frame {
        case .login:
            return []  // handled above
        case .send(let send):
            return placedCallSent(send, from: login.userId, now: now)
                + relay(send, from: id, user: login.userId, now: now)
        case .renew(let renew):
            var renewing = login
            guard renewing.lease.startRenewal() else {
                return refuse(id, requestId: renew.id, isSend: false, .invalidFrame, "a token check is already running")
            }
            sessions[id]?.phase = .loggedIn(renewing)
            return [.verifyToken(id, requestId: renew.id, token: renew.token, purpose: .renew)]
        case .users(let request):
            return [.send(id, .presence(.init(id: request.id, online: onlineUsers)))]
        case .subscribe(let request):
            var subscribed = login
            subscribed.subscribed = true
            sessions[id]?.phase = .loggedIn(subscribed)
            return [.send(id, .presence(.init(id: request.id, online: onlineUsers)))]
        case .unsubscribe(let request):
            var unsubscribed = login
            unsubscribed.subscribed = false
            sessions[id]?.phase = .loggedIn(unsubscribed)
            return [.send(id, .presence(.init(id: request.id, online: onlineUsers)))]
        case .ping(let request):
            return [.send(id, .pong(.init(id: request.id, serverTime: now)))]
        case .logout:
            return close(id, .loggedOut, "logged out", now: now)
        case .calls(let request):
            guard reportsRelays else {
                return refuse(
                    id, requestId: request.id, isSend: false, .invalidFrame, "the call ledger is off on this server")
            }
            return [.queryCalls(id, userId: login.userId, request)]
        case .registerDevice(let request):
            if let problem = devices.register(request.device, for: login.userId, now: now) {
                return refuse(id, requestId: request.id, isSend: false, .invalidFrame, problem)
            }
            return [.send(id, devicesFrame(of: login.userId, requestId: request.id)), .push(.saveDevices(devices))]
        case .devices(let request):
            return [.send(id, devicesFrame(of: login.userId, requestId: request.id))]
        case .removeDevice(let request):
            let removed = devices.remove(deviceId: request.deviceId, of: login.userId)
            return [.send(id, devicesFrame(of: login.userId, requestId: request.id))]
                + (removed ? [.push(.saveDevices(devices))] : [])
        case .invite(let invite):
            return invitations.handle(
                .invite(id, caller: login.userId, invite, calleeSessions: userSessions[invite.to] ?? []), now: now)
        case .invitationReceived(let ref):
            return invitations.handle(.received(id, ref), now: now)
        case .acceptInvitation(let reply):
            return invitations.handle(.accept(id, reply), now: now)
        case .refuseInvitation(let reply):
            return invitations.handle(.refuse(id, reply), now: now)
        case .cancelInvitation(let ref):
            return invitations.handle(.cancel(id, ref), now: now)
        case .acknowledgeAccept(let ref):
            return invitations.handle(.acknowledgeAccept(id, ref), now: now)
        case .matchEnter(let enter):
            return match.handle(.enter(id, user: login.userId, enter), now: now)
        case .matchLeave(let request):
            return match.handle(.leave(id, user: login.userId, request), now: now)
        }
    }

    private mutating func startLogin(_ id: SessionID, session: Session, _ login: ClientFrame.Login) -> [HubAction] {
        switch session.phase {
        case .loggedIn:
            return refuse(
                id, requestId: login.id, isSend: false, .alreadyLoggedIn,
                "this session is already logged in; use \"renew\" to change its token")
        case .verifyingLogin:
            return refuse(id, requestId: login.id, isSend: false, .invalidFrame, "a login is already being checked")
        case .awaitingLogin:
            break
        }
        if login.token.isEmpty {
            return refuse(id, requestId: login.id, isSend: false, .missingToken, "the login frame has an empty token")
        }
        sessions[id]?.phase = .verifyingLogin
        return [.verifyToken(id, requestId: login.id, token: login.token, purpose: .login)]
    }

    private mutating func tokenChecked(
        _ id: SessionID, requestId: Int?, purpose: TokenPurpose, result: TokenCheck, now: Int64
    ) -> [HubAction] {
        guard let session = sessions[id] else { return [] }
        switch (purpose, session.phase) {
        case (.login, .verifyingLogin):
            switch accept(result, session: id, requestId: requestId, now: now) {
            case .refused(let refusal):
                sessions[id]?.phase = .awaitingLogin
                return refusal
            case .accepted(let userId, let expiresAt):
                return logIn(id, userId: userId, expiresAt: expiresAt, requestId: requestId, now: now)
            }
        case (.renew, .loggedIn(var login)) where login.lease.renewal == .checking:
            switch accept(result, session: id, requestId: requestId, now: now) {
            case .refused(let refusal):
                login.lease.renewalRefused()
                sessions[id]?.phase = .loggedIn(login)
                return refusal
            case .accepted(let userId, let expiresAt):
                guard login.userId == userId else {
                    login.lease.renewalRefused()
                    sessions[id]?.phase = .loggedIn(login)
                    return refuse(
                        id, requestId: requestId, isSend: false, .userMismatch,
                        "the new token is for user \(userId), this session is user \(login.userId)")
                }
                login.lease.renewed(until: expiresAt)
                sessions[id]?.phase = .loggedIn(login)
                return [.send(id, .renewed(.init(id: requestId, expiresAt: expiresAt)))]
                    + tokenNotice(id, now: now)
            }
        default:
            return []  // the session moved on while its token was checked
        }
    }

    /// What a token check means for a session: its user and expiry, or the refusal to send.
    private enum CheckedToken {
        case accepted(userId: String, expiresAt: Int64)
        case refused([HubAction])
    }

    private func accept(_ result: TokenCheck, session id: SessionID, requestId: Int?, now: Int64) -> CheckedToken {
        switch result {
        case .invalid(let code, let message):
            return .refused(refuse(id, requestId: requestId, isSend: false, code, message))
        case .valid(_, let expiresAt) where expiresAt <= now:
            return .refused(
                refuse(
                    id, requestId: requestId, isSend: false, .tokenExpired,
                    "the token expired \((now - expiresAt) / 1000) s ago; get a new one"))
        case .valid(let userId, let expiresAt):
            return .accepted(userId: userId, expiresAt: expiresAt)
        }
    }

    /// A session whose login token was accepted logs in, unless its user has as many sessions as allowed.
    private mutating func logIn(_ id: SessionID, userId: String, expiresAt: Int64, requestId: Int?, now: Int64)
        -> [HubAction]
    {
        let existing = userSessions[userId] ?? []
        guard existing.count < limits.maxSessionsPerUser else {
            sessions[id]?.phase = .awaitingLogin
            return refuse(
                id, requestId: requestId, isSend: false, .tooManySessions,
                "user \(userId) already has \(existing.count) sessions, the most this server allows")
        }
        sessions[id]?.phase = .loggedIn(Login(userId: userId, lease: TokenLease(expiresAt: expiresAt)))
        loggedInSessionCount += 1
        userSessions[userId] = existing + [id]
        var actions: [HubAction] = [
            .send(
                id,
                .welcome(
                    .init(
                        id: requestId, userId: userId, sessionId: id.description, expiresAt: expiresAt,
                        serverTime: now, limits: limits.wire)))
        ]
        if existing.isEmpty {
            actions += presenceChanged(userId, online: true)
        }
        actions += liveTombstones(of: userId, now: now).map { .send(id, .callWithdrawn($0)) }
        actions += deliverHeld(to: userId, session: id, now: now)
        actions += tokenNotice(id, now: now)
        return actions
    }

    // MARK: - Relay

    private mutating func relay(_ send: ClientFrame.Send, from id: SessionID, user: String, now: Int64) -> [HubAction] {
        func fail(_ reason: SignalErrorCode, _ message: String) -> [HubAction] {
            // The ledger hears of a send before its sender does, so a sender that asks it next finds the call.
            report(send, from: id, user: user, reason == .peerOffline ? .offline : .failed(reason.rawValue))
                + [.send(id, .answer(.init(id: send.id, result: .failed, reason: reason, message: message)))]
        }
        guard SignalProtocol.isValidUserId(send.to) else {
            return fail(.invalidTarget, "\"to\" must be 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        guard send.to != user else {
            // With `copy`, a send to the sender's own user is a message to its other sessions (a device telling
            // the user's other devices it answered a call, docs/multi-device.md).
            guard send.copy == true else { return fail(.invalidTarget, "a user cannot send to itself") }
            let messageId = makeMessageId()
            let others = copies(of: send, from: id, user: user, messageId: messageId, now: now)
            guard !others.isEmpty else { return fail(.peerOffline, "user \(user) has no other session") }
            return others
                + [
                    .send(
                        id,
                        .answer(.init(id: send.id, result: .delivered, messageId: messageId, sessions: others.count)))
                ]
        }
        var ttl = send.ttl ?? 0
        guard ttl >= 0 else {
            return fail(.invalidFrame, "\"ttl\" must be 0 or more seconds")
        }
        if let problem = send.push?.problem {
            return fail(.invalidFrame, problem)
        }
        let messageId = makeMessageId()
        if let targets = userSessions[send.to], !targets.isEmpty {
            let message = ServerFrame.message(.init(from: user, body: send.body, sentAt: now, messageId: messageId))
            // A target whose outbox cannot take the message is closed now, and the answer counts only the rest.
            let cost = FrameCost.bytes(of: message)
            var reached: [SessionID] = []
            var dropped: [HubAction] = []
            for target in targets {
                if sessions[target]?.outbox.fits(
                    bytes: cost, maxFrames: limits.maxOutboxFrames, maxBytes: limits.maxOutboxBytes) == true
                {
                    reached.append(target)
                } else {
                    dropped += dropSlowConsumer(target, now: now)
                }
            }
            guard !reached.isEmpty else {
                return dropped
                    + fail(
                        .slowConsumer,
                        "every session of user \(send.to) was too slow reading its socket and was disconnected")
            }
            return reached.map { .send($0, message) } + dropped
                + report(send, from: id, user: user, .delivered(reached))
                + copies(of: send, from: id, user: user, messageId: messageId, now: now)
                + [
                    .send(
                        id,
                        .answer(.init(id: send.id, result: .delivered, messageId: messageId, sessions: reached.count)))
                ]
        }
        if let mark = send.push, mark.kind == .withdraw,
            let answer = withdrawHeldCall(mark, to: send.to, from: id, requestId: send.id, now: now)
        {
            // The ledger hears the withdrawing cancel too, or the call would end there as unanswered.
            return report(send, from: id, user: user, .queued) + answer
        }
        // A call to a user with devices is held for the ring time (or the sender's shorter ttl) and pushed.
        let call = send.push.flatMap { mark in
            mark.kind == .call && devices.hasDevices(send.to) && pushPolicy.ringSeconds > 0 ? mark : nil
        }
        if call != nil {
            ttl = ttl > 0 ? min(ttl, pushPolicy.ringSeconds) : pushPolicy.ringSeconds
        }
        guard ttl > 0 else {
            return fail(.peerOffline, "user \(send.to) is offline")
        }
        let queue = held[send.to] ?? []
        guard queue.count < limits.maxHeldPerUser else {
            return fail(
                .queueFull, "user \(send.to) is offline and already has \(queue.count) held messages, the most kept")
        }
        let fromSender = heldBySender[user] ?? 0
        guard fromSender < limits.maxHeldPerSender else {
            return fail(
                .queueFull, "you already have \(fromSender) messages held for offline users, the most kept per sender")
        }
        let bodyBytes = send.body.utf8.count
        guard heldBytes + bodyBytes <= limits.maxHeldBytes else {
            return fail(.queueFull, "the server holds as many message bytes for offline users as it keeps")
        }
        let appliedTTL = min(ttl, limits.maxTTLSeconds)
        let expiresAt = now + Int64(appliedTTL) * 1000
        // The push payload's caller id is a CallAPI user id: a sender whose id is not a number is not pushed.
        let push = call.flatMap { mark in
            UInt64(user).map {
                CallPush(
                    callId: mark.callId, callerId: $0, callerName: mark.callerName, video: mark.video ?? false,
                    ringDeadline: expiresAt)
            }
        }
        held[send.to] =
            queue + [
                HeldMessage(
                    messageId: messageId, from: user, body: send.body, sentAt: now, expiresAt: expiresAt,
                    pushedCall: push?.callId)
            ]
        heldCount += 1
        heldBytes += bodyBytes
        heldBySender[user] = fromSender + 1
        let answer = HubAction.send(
            id, .answer(.init(id: send.id, result: .queued, messageId: messageId, ttl: appliedTTL)))
        let reported = report(send, from: id, user: user, .queued)
        guard let push, appliedTTL > 0 else { return reported + [answer] }
        return reported + [answer]
            + devices.devices(of: send.to).map {
                .push(.deliver(PushJob(userId: send.to, device: $0.device, call: push)))
            }
    }

    /// The ledger's view of a `send` the hub handled (nothing unless ``reportsRelays``).
    private func report(_ send: ClientFrame.Send, from id: SessionID, user: String, _ result: RelayResult)
        -> [HubAction]
    {
        guard reportsRelays else { return [] }
        return [.relayed(RelayedSend(from: user, fromSession: id, to: send.to, body: send.body, result: result))]
    }

    /// Answers `send` from the session `id` with `body` from its target, without relaying it (the ledger's busy
    /// answer): the sender's send is answered delivered, `body` goes to the sender's sessions as a message from
    /// `send.to`.
    private mutating func answerOnBehalf(_ id: SessionID, _ send: ClientFrame.Send, body: String, now: Int64)
        -> [HubAction]
    {
        if let refusal = admit(id, now: now, requestId: send.id, isSend: true) { return refusal }
        // A sender that may not send gets the refusal a relayed send would get (not logged in, token expired).
        guard let login = sessions[id]?.login, !login.lease.isExpired(at: now) else {
            return process(.send(send), from: id, now: now)
        }
        let user = login.userId
        let messageId = makeMessageId()
        let message = ServerFrame.message(.init(from: send.to, body: body, sentAt: now, messageId: messageId))
        return placedCallSent(send, from: user, now: now) + report(send, from: id, user: user, .answeredBusy)
            + [.send(id, .answer(.init(id: send.id, result: .delivered, messageId: makeMessageId(), sessions: 1)))]
            + toUser(user, message)
    }

    /// A `send` with `copy` also goes to the sender's other sessions, so a user's other devices learn what
    /// this one answered (docs/multi-device.md).
    private func copies(
        of send: ClientFrame.Send, from id: SessionID, user: String, messageId: String, now: Int64
    ) -> [HubAction] {
        guard send.copy == true else { return [] }
        let copy = ServerFrame.message(
            .init(from: user, body: send.body, sentAt: now, messageId: messageId, to: send.to))
        return (userSessions[user] ?? []).filter { $0 != id }.map { .send($0, copy) }
    }

    mutating func makeMessageId() -> String {
        defer { nextMessageNumber += 1 }
        return "m-\(nextMessageNumber)"
    }

    private mutating func deliverHeld(to userId: String, session id: SessionID, now: Int64) -> [HubAction] {
        guard let queue = held.removeValue(forKey: userId) else { return [] }
        var actions: [HubAction] = []
        for message in queue {
            forget(message)
            let outcome: ServerFrame.HeldResult.Outcome = message.expiresAt > now ? .delivered : .expired
            if let callId = message.pushedCall {
                // Taken over signaling (or over): its pushes not sent yet are pointless.
                actions.append(.push(.cancel(callId: callId, userId: userId)))
                if outcome == .expired { addTombstone(callId, .expired, for: userId, now: now) }
            }
            if outcome == .delivered {
                actions.append(
                    .send(
                        id,
                        .message(
                            .init(
                                from: message.from, body: message.body, sentAt: message.sentAt,
                                messageId: message.messageId, held: true))))
            }
            actions += toUser(
                message.from, .heldResult(.init(messageId: message.messageId, to: userId, result: outcome)))
        }
        return actions
    }

    /// Uncounts a held message that was delivered, expired or withdrawn.
    mutating func forget(_ message: HeldMessage) {
        heldCount -= 1
        heldBytes -= message.body.utf8.count
        let remaining = (heldBySender[message.from] ?? 1) - 1
        heldBySender[message.from] = remaining > 0 ? remaining : nil
    }

    private func toUser(_ userId: String, _ frame: ServerFrame) -> [HubAction] {
        (userSessions[userId] ?? []).map { .send($0, frame) }
    }

    // MARK: - Presence and sessions

    private func presenceChanged(_ userId: String, online: Bool) -> [HubAction] {
        let frame = ServerFrame.presenceChanged(.init(userId: userId, online: online))
        return sessions.filter { $0.value.login?.subscribed == true }.keys.sorted().map { .send($0, frame) }
    }

    /// Forgets a session; tells subscribers if its user went offline.
    private mutating func remove(_ id: SessionID, now: Int64) -> [HubAction] {
        guard let session = sessions.removeValue(forKey: id) else { return [] }
        queuedFrames -= session.outbox.frames
        queuedBytes -= session.outbox.bytes
        guard let userId = session.login?.userId else { return [] }
        loggedInSessionCount -= 1
        // The other side of its invitations hears of it before presence subscribers do.
        let endedInvitations =
            invitations.handle(.sessionClosed(id), now: now) + match.handle(.sessionClosed(id), now: now)
        var remaining = userSessions[userId] ?? []
        remaining.removeAll { $0 == id }
        if remaining.isEmpty {
            userSessions[userId] = nil
            return endedInvitations + presenceChanged(userId, online: false)
        }
        userSessions[userId] = remaining
        return endedInvitations
    }

    private mutating func close(_ id: SessionID, _ reason: SignalErrorCode, _ message: String, now: Int64)
        -> [HubAction]
    {
        guard sessions[id] != nil else { return [] }
        return [
            .send(id, .closing(.init(reason: reason, message: message))),
            .close(id, code: SignalCloseCode.code(for: reason), reason: reason),
        ] + remove(id, now: now)
    }

    // MARK: - Outboxes

    /// Counts each `send` against its session's outbox; a session whose outbox is full is closed as a slow
    /// consumer instead (and the frames after it that it causes are counted the same way).
    private mutating func queued(_ planned: [HubAction], now: Int64) -> [HubAction] {
        var work = planned
        var result: [HubAction] = []
        result.reserveCapacity(planned.count)
        var index = 0
        while index < work.count {
            let action = work[index]
            index += 1
            guard case .send(let id, let frame) = action, let outbox = sessions[id]?.outbox else {
                result.append(action)
                continue
            }
            let cost = FrameCost.bytes(of: frame)
            guard outbox.fits(bytes: cost, maxFrames: limits.maxOutboxFrames, maxBytes: limits.maxOutboxBytes) else {
                work += dropSlowConsumer(id, now: now)
                continue
            }
            let relayedMessage = relayed(frame, to: id)
            sessions[id]?.outbox.push(bytes: cost, relayed: relayedMessage)
            queuedFrames += 1
            queuedBytes += cost
            result.append(action)
        }
        return result
    }

    /// What to remember about a relayed message in an outbox.
    private func relayed(_ frame: ServerFrame, to id: SessionID) -> RelayedMessage? {
        guard case .message(let message) = frame, message.held != true, let to = userId(of: id) else { return nil }
        return RelayedMessage(from: message.from, to: to, messageId: message.messageId)
    }

    /// Closes a session that does not read its socket: no `closing` frame (it would wait behind the backlog; the
    /// close code says it), and the senders of relayed messages it never got are told (`held_result` `failed`).
    private mutating func dropSlowConsumer(_ id: SessionID, now: Int64) -> [HubAction] {
        guard let session = sessions[id] else { return [] }
        var actions: [HubAction] = [.close(id, code: SignalCloseCode.slowConsumer, reason: .slowConsumer)]
        actions += remove(id, now: now)
        for message in session.outbox.unwritten {
            actions += toUser(
                message.from,
                .heldResult(.init(messageId: message.messageId, to: message.to, result: .failed, reason: .slowConsumer))
            )
        }
        return actions
    }

    // MARK: - Time

    private mutating func tokenNotice(_ id: SessionID, now: Int64) -> [HubAction] {
        guard var login = sessions[id]?.login,
            login.lease.due(now: now, noticeMillis: limits.tokenNoticeMillis) == .notice
        else { return [] }
        sessions[id]?.phase = .loggedIn(login)
        let expiresAt = login.lease.expiresAt
        let secondsLeft = Int(max(0, expiresAt - now) / 1000)
        return [.send(id, .tokenWillExpire(.init(expiresAt: expiresAt, secondsLeft: secondsLeft)))]
    }

    private mutating func tick(now: Int64) -> [HubAction] {
        var actions: [HubAction] = []
        for id in sessions.keys.sorted() {
            guard let session = sessions[id] else { continue }
            if let login = session.login {
                if login.lease.isExpired(at: now) {
                    actions += close(id, .tokenExpired, "the token expired; log in again with a new token", now: now)
                    continue
                }
                actions += tokenNotice(id, now: now)
            } else if now - session.connectedAt >= limits.loginTimeoutMillis {
                actions += close(
                    id, .loginTimeout, "no login within \(limits.loginTimeoutMillis / 1000) s of connecting", now: now)
                continue
            }
            if now - session.lastSeen >= limits.idleTimeoutMillis {
                actions += close(
                    id, .idleTimeout, "nothing received for \(limits.idleTimeoutMillis / 1000) s", now: now)
            }
        }
        for userId in held.keys.sorted() {
            let queue = held[userId] ?? []
            let expired = queue.filter { $0.expiresAt <= now }
            guard !expired.isEmpty else { continue }
            let kept = queue.filter { $0.expiresAt > now }
            held[userId] = kept.isEmpty ? nil : kept
            for message in expired {
                forget(message)
                if let callId = message.pushedCall {
                    addTombstone(callId, .expired, for: userId, now: now)
                    actions.append(.push(.cancel(callId: callId, userId: userId)))
                }
                actions += toUser(
                    message.from, .heldResult(.init(messageId: message.messageId, to: userId, result: .expired)))
            }
        }
        actions += invitations.handle(.tick, now: now)
        actions += match.handle(.tick, now: now)
        for userId in tombstones.keys.sorted() {
            let live = tombstones[userId]?.filter { $0.expiresAt > now } ?? []
            tombstones[userId] = live.isEmpty ? nil : live
        }
        return actions
    }

    private func formatRate(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }
}
