import CallAPISignalProtocol
import CallAPIWire

/// The signaling hub as a pure state machine: sessions, who is online, held messages and rate limits.
///
/// Feed it ``HubEvent``s with the current time; it returns the ``HubAction``s to perform. No I/O, no clock.
package struct HubState: Sendable, HubFrameQueue {
    /// A relayed message in a session's outbox: whom to tell if it is never written.
    struct RelayedMessage: Sendable, Equatable {
        var from: String
        var to: String
        var messageId: String
    }

    package let limits: HubLimits
    private(set) var sessions = SessionTable<Session>()
    /// The sessions' ids in ascending order: a shutdown visits every session in this fixed order without sorting
    /// them all.
    private var sessionOrder = SortedSessionIDs()
    /// When each session next needs the tick.
    private var deadlines = SessionDeadlines()
    /// Logged-in sessions by user, in login order.
    private(set) var userSessions: [String: [SessionID]] = [:]
    /// Messages held for offline users, with the counts their limits are checked against.
    var held = HeldMessages()
    /// The sessions subscribed to presence changes, in id order: a login or logout reaches them without a pass
    /// over every session.
    private var presenceSubscribers = SortedSessionIDs()
    /// Messages held for offline users, and their body bytes (as JSON carries them).
    package var heldCount: Int { held.count }
    package var heldBytes: Int { held.bytes }
    /// The sessions' outboxes: totals, and the sessions found too slow during the current event.
    private var outboxes: OutboxAccounting
    /// Frames and bytes queued for all sessions' writers.
    package var queuedFrames: Int { outboxes.frames }
    package var queuedBytes: Int { outboxes.bytes }
    private var loggedInSessionCount = 0
    private var nextMessageNumber: Int64 = 1
    private(set) var isShuttingDown = false
    /// Push devices by user, and how calls are pushed and withdrawn.
    package internal(set) var devices: DeviceRegistry
    package let pushPolicy: PushPolicy

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
        outboxes = OutboxAccounting(maxFrames: limits.maxOutboxFrames, maxBytes: limits.maxOutboxBytes)
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
    package func userId(of session: SessionID) -> String? {
        // One look-up on the path of every relayed message. (Reading the phase through `sessions[at:]` still copies
        // the session; docs/benchmarks.md, "Frames read in place".)
        guard let index = sessions.index(forKey: session),
            case .loggedIn(let login) = sessions[at: index].phase
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
    package mutating func handle(_ event: HubEvent, now: Int64, into actions: inout [HubAction]) {
        if case .written(let id, let frames) = event {
            if let index = sessions.index(forKey: id) { outboxes.written(frames, from: &sessions[at: index].outbox) }
            return
        }
        apply(event, now: now, into: &actions)
        while let id = outboxes.nextSlowConsumer() { dropSlowConsumer(id, now: now, into: &actions) }
    }

    private mutating func apply(_ event: HubEvent, now: Int64, into actions: inout [HubAction]) {
        switch event {
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
        case .ledgerAnswered(let id, let frame):
            // The session may have gone while the ledger was read.
            if sessions[id] != nil { enqueue(frame, to: id, into: &actions) }
        case .tick:
            tick(now: now, into: &actions)
        case .shutdown:
            isShuttingDown = true
            for id in sessionOrder {
                close(
                    id, .serverShutdown, "the server is shutting down; reconnect in a moment", now: now, into: &actions)
            }
        case .pushRejected(let userId, let deviceId, let token):
            if devices.removeRejected(deviceId: deviceId, of: userId, token: token) {
                actions.append(.push(.saveDevices(devices)))
            }
        case .removeDevice(let userId, let deviceId):
            if devices.remove(deviceId: deviceId, of: userId) { actions.append(.push(.saveDevices(devices))) }
        case .placeCall(let order, let callId):
            placeCall(order, callId: callId, now: now, into: &actions)
        }
    }

    private mutating func connect(_ id: SessionID, now: Int64, into actions: inout [HubAction]) {
        let waiting = sessions.count - loggedInSessionCount
        let session = Session(connectedAt: now, lastSeen: now, bucket: TokenBucket(burst: limits.burst, now: now))
        if sessions.updateValue(session, forKey: id) == nil {
            sessionOrder.insert(id)
        }
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
    private mutating func admit(
        _ id: SessionID, now: Int64, requestId: Int?, isSend: Bool, into actions: inout [HubAction]
    ) -> Bool {
        // Changed where it is stored: a copy written back costs a retain and release of everything it holds.
        guard let index = sessions.index(forKey: id) else { return false }
        let refusedInARow = sessions[at: index].admitFrame(
            now: now, ratePerSecond: limits.ratePerSecond, burst: limits.burst)
        guard refusedInARow == 0 else {
            // Refusals are coalesced: only the first of a run is answered, so a flood that does not read its
            // socket cannot fill its own outbox with them; a run past the limit closes the session.
            if refusedInARow > limits.maxRefusalsInARow {
                close(
                    id, .rateLimited, "\(refusedInARow) frames in a row over the rate limit; closing", now: now,
                    into: &actions)
            } else if refusedInARow == 1 {
                refuse(
                    id, requestId: requestId, isSend: isSend, .rateLimited,
                    "more than \(limits.burst) frames at once or \(formatRate(limits.ratePerSecond)) per second; "
                        + "slow down (until you do, frames are refused without an answer)", into: &actions)
            }
            return false
        }
        return true
    }

    /// An `answer` (for sends) or `error` frame.
    private mutating func refuse(
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

    private mutating func receive(
        _ frame: ClientFrame, from id: SessionID, now: Int64, into actions: inout [HubAction]
    ) {
        let isSend = if case .send = frame { true } else { false }
        if admit(id, now: now, requestId: frame.requestId, isSend: isSend, into: &actions) {
            process(frame, from: id, now: now, into: &actions)
        }
    }

    private mutating func process(
        _ frame: ClientFrame, from id: SessionID, now: Int64, into actions: inout [HubAction]
    ) {
        guard let index = sessions.index(forKey: id) else { return }
        if case .login(let login) = frame {
            startLogin(id, session: sessions[at: index], login, into: &actions)
            return
        }
        guard let login = Self.read(&sessions[at: index], { $0.login }) else {
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
            sessions[id]?.phase = .loggedIn(renewing)
            actions.append(.verifyToken(id, requestId: renew.id, token: renew.token, purpose: .renew))
        case .users(let request):
            enqueue(.presence(.init(id: request.id, online: onlineUsers)), to: id, into: &actions)
        case .subscribe(let request):
            presenceSubscribers.insert(id)
            enqueue(.presence(.init(id: request.id, online: onlineUsers)), to: id, into: &actions)
        case .unsubscribe(let request):
            presenceSubscribers.remove(id)
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
        case .registerDevice(let request):
            if let problem = devices.register(request.device, for: login.userId, now: now) {
                refuse(id, requestId: request.id, isSend: false, .invalidFrame, problem, into: &actions)
                return
            }
            enqueue(devicesFrame(of: login.userId, requestId: request.id), to: id, into: &actions)
            actions.append(.push(.saveDevices(devices)))
        case .devices(let request):
            enqueue(devicesFrame(of: login.userId, requestId: request.id), to: id, into: &actions)
        case .removeDevice(let request):
            let removed = devices.remove(deviceId: request.deviceId, of: login.userId)
            enqueue(devicesFrame(of: login.userId, requestId: request.id), to: id, into: &actions)
            if removed { actions.append(.push(.saveDevices(devices))) }
        case .invite(let invite):
            let input = InvitationInput.invite(
                id, caller: login.userId, invite, calleeSessions: userSessions[invite.to] ?? [])
            runInvitations(input, now: now, into: &actions)
        case .invitationReceived(let ref):
            runInvitations(.received(id, ref), now: now, into: &actions)
        case .acceptInvitation(let reply):
            runInvitations(.accept(id, reply), now: now, into: &actions)
        case .refuseInvitation(let reply):
            runInvitations(.refuse(id, reply), now: now, into: &actions)
        case .cancelInvitation(let ref):
            runInvitations(.cancel(id, ref), now: now, into: &actions)
        case .acknowledgeAccept(let ref):
            runInvitations(.acknowledgeAccept(id, ref), now: now, into: &actions)
        case .matchEnter(let enter):
            runMatch(.enter(id, user: login.userId, enter), now: now, into: &actions)
        case .matchLeave(let request):
            runMatch(.leave(id, user: login.userId, request), now: now, into: &actions)
        }
    }

    private mutating func startLogin(
        _ id: SessionID, session: Session, _ login: ClientFrame.Login, into actions: inout [HubAction]
    ) {
        switch session.phase {
        case .loggedIn:
            refuse(
                id, requestId: login.id, isSend: false, .alreadyLoggedIn,
                "this session is already logged in; use \"renew\" to change its token", into: &actions)
            return
        case .verifyingLogin:
            refuse(
                id, requestId: login.id, isSend: false, .invalidFrame, "a login is already being checked",
                into: &actions)
            return
        case .awaitingLogin:
            break
        }
        if login.token.isEmpty {
            refuse(
                id, requestId: login.id, isSend: false, .missingToken, "the login frame has an empty token",
                into: &actions)
            return
        }
        sessions[id]?.phase = .verifyingLogin
        actions.append(.verifyToken(id, requestId: login.id, token: login.token, purpose: .login))
    }

    private mutating func tokenChecked(
        _ id: SessionID, requestId: Int?, purpose: TokenPurpose, result: TokenCheck, now: Int64,
        into actions: inout [HubAction]
    ) {
        guard let session = sessions[id] else { return }
        switch (purpose, session.phase) {
        case (.login, .verifyingLogin):
            switch accept(result, now: now) {
            case .refused(let code, let message):
                sessions[id]?.phase = .awaitingLogin
                refuse(id, requestId: requestId, isSend: false, code, message, into: &actions)
            case .accepted(let userId, let expiresAt):
                logIn(id, userId: userId, expiresAt: expiresAt, requestId: requestId, now: now, into: &actions)
            }
        case (.renew, .loggedIn(var login)) where login.lease.renewal == .checking:
            switch accept(result, now: now) {
            case .refused(let code, let message):
                login.lease.renewalRefused()
                sessions[id]?.phase = .loggedIn(login)
                refuse(id, requestId: requestId, isSend: false, code, message, into: &actions)
            case .accepted(let userId, let expiresAt):
                guard login.userId == userId else {
                    login.lease.renewalRefused()
                    sessions[id]?.phase = .loggedIn(login)
                    refuse(
                        id, requestId: requestId, isSend: false, .userMismatch,
                        "the new token is for user \(userId), this session is user \(login.userId)", into: &actions)
                    return
                }
                login.lease.renewed(until: expiresAt)
                sessions[id]?.phase = .loggedIn(login)
                scheduleTick(for: id)
                enqueue(.renewed(.init(id: requestId, expiresAt: expiresAt)), to: id, into: &actions)
                tokenNotice(id, now: now, into: &actions)
            }
        default:
            break  // the session moved on while its token was checked
        }
    }

    /// What a token check means for a session: its user and expiry, or why it is refused.
    private enum CheckedToken {
        case accepted(userId: String, expiresAt: Int64)
        case refused(SignalErrorCode, String)
    }

    private func accept(_ result: TokenCheck, now: Int64) -> CheckedToken {
        switch result {
        case .invalid(let code, let message):
            return .refused(code, message)
        case .valid(_, let expiresAt) where expiresAt <= now:
            return .refused(.tokenExpired, "the token expired \((now - expiresAt) / 1000) s ago; get a new one")
        case .valid(let userId, let expiresAt):
            return .accepted(userId: userId, expiresAt: expiresAt)
        }
    }

    /// A session whose login token was accepted logs in, unless its user has as many sessions as allowed.
    private mutating func logIn(
        _ id: SessionID, userId: String, expiresAt: Int64, requestId: Int?, now: Int64,
        into actions: inout [HubAction]
    ) {
        let existing = userSessions[userId] ?? []
        guard existing.count < limits.maxSessionsPerUser else {
            sessions[id]?.phase = .awaitingLogin
            refuse(
                id, requestId: requestId, isSend: false, .tooManySessions,
                "user \(userId) already has \(existing.count) sessions, the most this server allows", into: &actions)
            return
        }
        sessions[id]?.phase = .loggedIn(Login(userId: userId, lease: TokenLease(expiresAt: expiresAt)))
        scheduleTick(for: id)
        loggedInSessionCount += 1
        userSessions[userId] = existing + [id]
        enqueue(
            .welcome(
                .init(
                    id: requestId, userId: userId, sessionId: id.description, expiresAt: expiresAt, serverTime: now,
                    limits: limits.wire)), to: id, into: &actions)
        if existing.isEmpty {
            presenceChanged(userId, online: true, into: &actions)
        }
        for tombstone in liveTombstones(of: userId, now: now) {
            enqueue(.callWithdrawn(tombstone), to: id, into: &actions)
        }
        deliverHeld(to: userId, session: id, now: now, into: &actions)
        tokenNotice(id, now: now, into: &actions)
    }

    // MARK: - Relay

    private mutating func relay(
        _ send: ClientFrame.Send, from id: SessionID, user: String, now: Int64, into actions: inout [HubAction]
    ) {
        func fail(_ reason: SignalErrorCode, _ message: String, into actions: inout [HubAction]) {
            // The ledger hears of a send before its sender does, so a sender that asks it next finds the call.
            report(
                send, from: id, user: user, reason == .peerOffline ? .offline : .failed(reason.rawValue), into: &actions
            )
            enqueue(
                .answer(.init(id: send.id, result: .failed, reason: reason, message: message)), to: id, into: &actions)
        }
        guard SignalProtocol.isValidUserId(send.to) else {
            return fail(.invalidTarget, "\"to\" must be 1-64 characters of A-Z a-z 0-9 . _ -", into: &actions)
        }
        guard send.to != user else {
            // With `copy`, a send to the sender's own user is a message to its other sessions (a device telling
            // the user's other devices it answered a call, docs/multi-device.md).
            guard send.copy == true else { return fail(.invalidTarget, "a user cannot send to itself", into: &actions) }
            let messageId = makeMessageId()
            let others = otherSessions(of: user, than: id)
            guard !others.isEmpty else {
                return fail(.peerOffline, "user \(user) has no other session", into: &actions)
            }
            copy(send, to: others, user: user, messageId: messageId, now: now, into: &actions)
            enqueue(
                .answer(.init(id: send.id, result: .delivered, messageId: messageId, sessions: others.count)), to: id,
                into: &actions)
            return
        }
        var ttl = send.ttl ?? 0
        guard ttl >= 0 else {
            return fail(.invalidFrame, "\"ttl\" must be 0 or more seconds", into: &actions)
        }
        if let problem = send.push?.problem {
            return fail(.invalidFrame, problem, into: &actions)
        }
        let messageId = makeMessageId()
        if let targets = userSessions[send.to], !targets.isEmpty {
            let message = ServerFrame.message(
                .init(from: user, relayBody: send.relayBody, sentAt: now, messageId: messageId))
            // A target whose outbox cannot take the message is closed now, and the answer counts only the rest.
            let cost = FrameCost.bytes(of: message)
            func fits(_ target: SessionID) -> Bool {
                guard let index = sessions.index(forKey: target) else { return false }
                let outbox = Self.read(&sessions[at: index]) { $0.outbox }
                return outboxes.fits(target, cost: cost, outbox: outbox)
            }
            // Usually every target can take it: then `targets` itself is the list, without building another.
            var reached = targets
            var tooSlow: [SessionID] = []
            if !targets.allSatisfy(fits) {
                reached = targets.filter(fits)
                tooSlow = targets.filter { !fits($0) }
            }
            for target in reached { enqueue(message, to: target, cost: cost, into: &actions) }
            for target in tooSlow { dropSlowConsumer(target, now: now, into: &actions) }
            guard !reached.isEmpty else {
                return fail(
                    .slowConsumer,
                    "every session of user \(send.to) was too slow reading its socket and was disconnected",
                    into: &actions)
            }
            report(send, from: id, user: user, .delivered(reached), into: &actions)
            if send.copy == true {
                let others = otherSessions(of: user, than: id)
                if !others.isEmpty {
                    copy(send, to: others, user: user, messageId: messageId, now: now, into: &actions)
                }
            }
            enqueue(
                .answer(.init(id: send.id, result: .delivered, messageId: messageId, sessions: reached.count)), to: id,
                into: &actions)
            return
        }
        if let mark = send.push, mark.kind == .withdraw,
            let answer = withdrawHeldCall(mark, to: send.to, requestId: send.id, now: now)
        {
            // The ledger hears the withdrawing cancel too, or the call would end there as unanswered.
            report(send, from: id, user: user, .queued, into: &actions)
            actions.append(.push(.cancel(callId: mark.callId, userId: send.to)))
            enqueue(.answer(answer), to: id, into: &actions)
            return
        }
        // A call to a user with devices is held for the ring time (or the sender's shorter ttl) and pushed.
        let call = send.push.flatMap { mark in
            mark.kind == .call && devices.hasDevices(send.to) && pushPolicy.ringSeconds > 0 ? mark : nil
        }
        if call != nil {
            ttl = ttl > 0 ? min(ttl, pushPolicy.ringSeconds) : pushPolicy.ringSeconds
        }
        guard ttl > 0 else {
            return fail(.peerOffline, "user \(send.to) is offline", into: &actions)
        }
        let queue = held.queue(of: send.to)
        if let mark = call, let index = queue.firstIndex(where: { $0.pushedCall == mark.callId && $0.from == user }) {
            return replaceHeldCall(
                at: index, for: send.to, with: send, from: id, user: user, ttl: ttl, now: now,
                into: &actions)
        }
        guard queue.count < limits.maxHeldPerUser else {
            return fail(
                .queueFull, "user \(send.to) is offline and already has \(queue.count) held messages, the most kept",
                into: &actions)
        }
        let fromSender = held.count(from: user)
        guard fromSender < limits.maxHeldPerSender else {
            return fail(
                .queueFull, "you already have \(fromSender) messages held for offline users, the most kept per sender",
                into: &actions)
        }
        let bodyBytes = send.relayBody.escapedCount
        guard held.bytes + bodyBytes <= limits.maxHeldBytes else {
            return fail(
                .queueFull, "the server holds as many message bytes for offline users as it keeps", into: &actions)
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
        held.hold(
            HeldMessages.Message(
                messageId: messageId, from: user, body: send.relayBody, sentAt: now, expiresAt: expiresAt,
                pushedCall: push?.callId), for: send.to)
        report(send, from: id, user: user, .queued, into: &actions)
        enqueue(
            .answer(.init(id: send.id, result: .queued, messageId: messageId, ttl: appliedTTL)), to: id,
            into: &actions)
        guard let push, appliedTTL > 0 else { return }
        for device in devices.devices(of: send.to) {
            actions.append(.push(.deliver(PushJob(userId: send.to, device: device.device, call: push))))
        }
    }

    /// A repeat of a call already held and pushed for `userId` (the caller's call message sent again, as CallAPI
    /// does until it hears back): replaces the held message's body and deadline and keeps its message id, which
    /// the answer carries again. Its devices are not pushed again: one push per device per call (docs/push.md).
    private mutating func replaceHeldCall(
        at index: Int, for userId: String, with send: ClientFrame.Send, from id: SessionID, user: String, ttl: Int,
        now: Int64, into actions: inout [HubAction]
    ) {
        let queue = held.queue(of: userId)
        guard queue.indices.contains(index) else { return }
        let old = queue[index]
        guard held.bytes - old.body.escapedCount + send.relayBody.escapedCount <= limits.maxHeldBytes else {
            report(send, from: id, user: user, .failed(SignalErrorCode.queueFull.rawValue), into: &actions)
            enqueue(
                .answer(
                    .init(
                        id: send.id, result: .failed, reason: .queueFull,
                        message: "the server holds as many message bytes for offline users as it keeps")), to: id,
                into: &actions)
            return
        }
        let appliedTTL = min(ttl, limits.maxTTLSeconds)
        held.replace(
            at: index, for: userId, body: send.relayBody, sentAt: now, expiresAt: now + Int64(appliedTTL) * 1000)
        report(send, from: id, user: user, .queued, into: &actions)
        enqueue(
            .answer(.init(id: send.id, result: .queued, messageId: old.messageId, ttl: appliedTTL)), to: id,
            into: &actions)
    }

    /// The ledger's view of a `send` the hub handled (nothing unless ``reportsRelays``).
    private func report(
        _ send: ClientFrame.Send, from id: SessionID, user: String, _ result: RelayResult,
        into actions: inout [HubAction]
    ) {
        guard reportsRelays else { return }
        actions.append(
            .relayed(RelayedSend(from: user, fromSession: id, to: send.to, relayBody: send.relayBody, result: result)))
    }

    /// Answers `send` from the session `id` with `body` from its target, without relaying it (the ledger's busy
    /// answer): the sender's send is answered delivered, `body` goes to the sender's sessions as a message from
    /// `send.to`.
    private mutating func answerOnBehalf(
        _ id: SessionID, _ send: ClientFrame.Send, body: String, now: Int64, into actions: inout [HubAction]
    ) {
        guard admit(id, now: now, requestId: send.id, isSend: true, into: &actions) else { return }
        // A sender that may not send gets the refusal a relayed send would get (not logged in, token expired).
        guard let login = sessions[id]?.login, !login.lease.isExpired(at: now) else {
            return process(.send(send), from: id, now: now, into: &actions)
        }
        let user = login.userId
        let messageId = makeMessageId()
        let message = ServerFrame.message(.init(from: send.to, body: body, sentAt: now, messageId: messageId))
        placedCallSent(send, from: user, now: now, into: &actions)
        report(send, from: id, user: user, .answeredBusy, into: &actions)
        enqueue(
            .answer(.init(id: send.id, result: .delivered, messageId: makeMessageId(), sessions: 1)), to: id,
            into: &actions)
        toUser(user, message, into: &actions)
    }

    /// The sessions of `user` other than `id`: where a `send` with `copy` also goes, so a user's other devices
    /// learn what this one answered (docs/multi-device.md).
    private func otherSessions(of user: String, than id: SessionID) -> [SessionID] {
        // Most users are on one device: then no list is built.
        guard let sessions = userSessions[user], sessions.count > 1 else { return [] }
        return sessions.filter { $0 != id }
    }

    private mutating func copy(
        _ send: ClientFrame.Send, to sessions: [SessionID], user: String, messageId: String, now: Int64,
        into actions: inout [HubAction]
    ) {
        let copy = ServerFrame.message(
            .init(from: user, relayBody: send.relayBody, sentAt: now, messageId: messageId, to: send.to))
        for session in sessions { enqueue(copy, to: session, into: &actions) }
    }

    mutating func makeMessageId() -> String {
        defer { nextMessageNumber += 1 }
        // Written in place: `"m-" + String(number)` built two strings and joined them, ~450 instructions of every
        // relayed message (callgrind).
        let number = nextMessageNumber
        return String(unsafeUninitializedCapacity: 2 + JSONLength.decimalLength(number)) { memory in
            var id = JSONMemory(UnsafeMutableRawBufferPointer(memory))
            id.writeByte(UInt8(ascii: "m"))
            id.writeByte(UInt8(ascii: "-"))
            id.writeInteger(number)
            return id.written
        }
    }

    private mutating func deliverHeld(
        to userId: String, session id: SessionID, now: Int64, into actions: inout [HubAction]
    ) {
        for message in held.takeAll(for: userId) {
            let outcome: ServerFrame.HeldResult.Outcome = message.expiresAt > now ? .delivered : .expired
            if let callId = message.pushedCall {
                // Taken over signaling (or over): its pushes not sent yet are pointless.
                actions.append(.push(.cancel(callId: callId, userId: userId)))
                if outcome == .expired { addTombstone(callId, .expired, for: userId, now: now) }
            }
            if outcome == .delivered {
                enqueue(
                    .message(
                        .init(
                            from: message.from, relayBody: message.body, sentAt: message.sentAt,
                            messageId: message.messageId, held: true)), to: id, into: &actions)
            }
            toUser(
                message.from, .heldResult(.init(messageId: message.messageId, to: userId, result: outcome)),
                into: &actions)
        }
    }

    private mutating func toUser(_ userId: String, _ frame: ServerFrame, into actions: inout [HubAction]) {
        for session in userSessions[userId] ?? [] { enqueue(frame, to: session, into: &actions) }
    }

    // MARK: - Presence and sessions

    private mutating func presenceChanged(_ userId: String, online: Bool, into actions: inout [HubAction]) {
        let frame = ServerFrame.presenceChanged(.init(userId: userId, online: online))
        for id in presenceSubscribers { enqueue(frame, to: id, into: &actions) }
    }

    /// Forgets a session; tells subscribers if its user went offline.
    private mutating func remove(_ id: SessionID, now: Int64, into actions: inout [HubAction]) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        deadlines.remove(id)
        sessionOrder.remove(id)
        outboxes.forget(session.outbox)
        presenceSubscribers.remove(id)
        guard let userId = session.login?.userId else { return }
        loggedInSessionCount -= 1
        var remaining = userSessions[userId] ?? []
        remaining.removeAll { $0 == id }
        userSessions[userId] = remaining.isEmpty ? nil : remaining
        // The other side of its invitations hears of it before presence subscribers do.
        runInvitations(.sessionClosed(id), now: now, into: &actions)
        runMatch(.sessionClosed(id), now: now, into: &actions)
        if remaining.isEmpty {
            presenceChanged(userId, online: false, into: &actions)
        }
    }

    /// Closes a session: a `closing` frame, then the close. Its outbox is not counted: the session is forgotten
    /// at once, and the frame goes out however full the outbox is.
    private mutating func close(
        _ id: SessionID, _ reason: SignalErrorCode, _ message: String, now: Int64, into actions: inout [HubAction]
    ) {
        guard sessions[id] != nil else { return }
        actions.append(.send(id, .closing(.init(reason: reason, message: message))))
        actions.append(.close(id, code: SignalCloseCode.code(for: reason), reason: reason))
        remove(id, now: now, into: &actions)
    }

    /// Runs the invitation machine; its frames are queued through ``enqueue(_:to:into:)`` as it produces them. The
    /// machine is lent out of the hub while it runs (a placeholder stands in), so that the hub can be its queue.
    private mutating func runInvitations(_ input: InvitationInput, now: Int64, into actions: inout [HubAction]) {
        var machine = invitations
        invitations = InvitationMachine(limits: machine.limits)
        machine.handle(input, now: now, into: &actions, queue: &self)
        invitations = machine
    }

    /// Runs the match machine, lent out like the invitation machine (``runInvitations(_:now:into:)``).
    mutating func runMatch(_ input: MatchInput, now: Int64, into actions: inout [HubAction]) {
        var machine = match
        match = MatchMachine(limits: machine.limits, idPrefix: "")
        machine.handle(input, now: now, into: &actions, queue: &self)
        match = machine
    }

    // MARK: - Outboxes

    /// Queues `frame` for session `id`: counts it against the session's outbox and appends the `send`. A frame that
    /// does not fit is not sent: the session is noted as a slow consumer (it takes no more frames) and closed when
    /// the event's other steps are done (``OutboxAccounting/nextSlowConsumer()``). A frame for a session the hub
    /// does not know (closed during this event) is appended uncounted; the shell has no socket for it.
    package mutating func enqueue(_ frame: ServerFrame, to id: SessionID, into actions: inout [HubAction]) {
        enqueue(frame, to: id, cost: nil, into: &actions)
    }

    /// ``enqueue(_:to:into:)`` with the frame's ``FrameCost``, when the caller has already computed it.
    private mutating func enqueue(
        _ frame: ServerFrame, to id: SessionID, cost: Int?, into actions: inout [HubAction]
    ) {
        guard let index = sessions.index(forKey: id) else {
            actions.append(.send(id, frame))
            return
        }
        let cost = cost ?? FrameCost.bytes(of: frame)
        // What to remember about a relayed message in an outbox.
        var relayedMessage: RelayedMessage?
        if case .message(let message) = frame, message.held != true,
            let to = Self.read(&sessions[at: index], { $0.login?.userId })
        {
            relayedMessage = RelayedMessage(from: message.from, to: to, messageId: message.messageId)
        }
        if outboxes.admit(id, cost: cost, relayed: relayedMessage, into: &sessions[at: index].outbox) {
            actions.append(.send(id, frame))
        }
    }

    /// Reads from a session where it is stored. Read through `sessions[at: index]`, a field came from a copy of
    /// the whole session, whose contents were retained and released (callgrind: ~200 instructions a read, four
    /// reads per relayed message); passed `inout`, the session is reached in place.
    private static func read<Result>(_ session: inout Session, _ body: (Session) -> Result) -> Result {
        body(session)
    }

    /// Closes a session that does not read its socket: no `closing` frame (it would wait behind the backlog; the
    /// close code says it), and the senders of relayed messages it never got are told (`held_result` `failed`).
    private mutating func dropSlowConsumer(_ id: SessionID, now: Int64, into actions: inout [HubAction]) {
        guard let session = sessions[id] else { return }
        actions.append(.close(id, code: SignalCloseCode.slowConsumer, reason: .slowConsumer))
        remove(id, now: now, into: &actions)
        for message in session.outbox.unwritten {
            toUser(
                message.from,
                .heldResult(
                    .init(messageId: message.messageId, to: message.to, result: .failed, reason: .slowConsumer)),
                into: &actions)
        }
    }

    // MARK: - Time

    private mutating func tokenNotice(_ id: SessionID, now: Int64, into actions: inout [HubAction]) {
        guard var login = sessions[id]?.login,
            login.lease.due(now: now, noticeMillis: limits.tokenNoticeMillis) == .notice
        else { return }
        sessions[id]?.phase = .loggedIn(login)
        let expiresAt = login.lease.expiresAt
        let secondsLeft = Int(max(0, expiresAt - now) / 1000)
        enqueue(.tokenWillExpire(.init(expiresAt: expiresAt, secondsLeft: secondsLeft)), to: id, into: &actions)
    }

    /// Schedules the tick for `id`'s next deadline: the login timeout until it logs in, then its token's notice and
    /// expiry, and the idle timeout throughout. Called wherever one may move earlier: a connection, a login, a
    /// renewal. (A refused login goes back to the deadlines it had while it was checked; one that moves later is
    /// met by the earlier wake-up, which schedules the next.)
    private mutating func scheduleTick(for id: SessionID) {
        guard let session = sessions[id] else { return }
        let idle = SessionDeadlines.time(limits.idleTimeoutMillis, after: session.lastSeen)
        let next: Int64
        if let login = session.login {
            next = min(idle, login.lease.nextDue(noticeMillis: limits.tokenNoticeMillis))
        } else {
            next = min(idle, SessionDeadlines.time(limits.loginTimeoutMillis, after: session.connectedAt))
        }
        deadlines.schedule(id, at: next)
    }

    private mutating func tick(now: Int64, into actions: inout [HubAction]) {
        // Only the sessions with a deadline due, in id order, as a visit of every session would act on them.
        for id in deadlines.takeDue(now: now) {
            guard let session = sessions[id] else { continue }
            if let login = session.login {
                if login.lease.isExpired(at: now) {
                    close(
                        id, .tokenExpired, "the token expired; log in again with a new token", now: now, into: &actions)
                    continue
                }
                tokenNotice(id, now: now, into: &actions)
            } else if now - session.connectedAt >= limits.loginTimeoutMillis {
                close(
                    id, .loginTimeout, "no login within \(limits.loginTimeoutMillis / 1000) s of connecting", now: now,
                    into: &actions)
                continue
            }
            if now - session.lastSeen >= limits.idleTimeoutMillis {
                close(
                    id, .idleTimeout, "nothing received for \(limits.idleTimeoutMillis / 1000) s", now: now,
                    into: &actions)
                continue
            }
            scheduleTick(for: id)
        }
        for (userId, expired) in held.takeExpired(now: now) {
            for message in expired {
                if let callId = message.pushedCall {
                    addTombstone(callId, .expired, for: userId, now: now)
                    actions.append(.push(.cancel(callId: callId, userId: userId)))
                }
                toUser(
                    message.from, .heldResult(.init(messageId: message.messageId, to: userId, result: .expired)),
                    into: &actions)
            }
        }
        runInvitations(.tick, now: now, into: &actions)
        runMatch(.tick, now: now, into: &actions)
        held.expireTombstones(now: now)
    }

    private func formatRate(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }
}
