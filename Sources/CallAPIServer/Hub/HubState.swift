import CallAPISignalProtocol

/// The signaling hub as a pure state machine: sessions, who is online, held messages and rate limits.
///
/// Feed it ``HubEvent``s with the current time; it returns the ``HubAction``s to perform. No I/O, no clock.
public struct HubState: Sendable {
    /// One connection.
    struct Session: Sendable, Equatable {
        var connectedAt: Int64
        var lastSeen: Int64
        var bucket: TokenBucket
        var login: Login?
        var subscribed = false
        /// A login or renew token is being checked.
        var verifying = false
    }

    /// A logged-in session's identity.
    struct Login: Sendable, Equatable {
        var userId: String
        var expiresAt: Int64
        var noticeSent = false
    }

    /// A message kept for an offline user.
    struct HeldMessage: Sendable, Equatable {
        var messageId: String
        var from: String
        var body: String
        var sentAt: Int64
        var expiresAt: Int64
    }

    public let limits: HubLimits
    private(set) var sessions: [SessionID: Session] = [:]
    /// Logged-in sessions by user, in login order.
    private(set) var userSessions: [String: [SessionID]] = [:]
    private(set) var held: [String: [HeldMessage]] = [:]
    private var nextMessageNumber: UInt64 = 1
    private(set) var isShuttingDown = false

    public init(limits: HubLimits) {
        self.limits = limits
    }

    /// Users with at least one logged-in session, sorted.
    public var onlineUsers: [String] { userSessions.keys.sorted() }
    /// How many users have a logged-in session (without sorting them: the hub reads this after every event).
    public var onlineUserCount: Int { userSessions.count }
    /// Open connections, logged in or not.
    public var sessionCount: Int { sessions.count }
    /// Messages held for offline users.
    public var heldCount: Int { held.values.reduce(0) { $0 + $1.count } }
    /// The user a session is logged in as.
    public func userId(of session: SessionID) -> String? { sessions[session]?.login?.userId }

    // MARK: - Events

    /// Applies `event` and returns what to do.
    public mutating func handle(_ event: HubEvent) -> [HubAction] {
        switch event {
        case .connected(let id, let now):
            return connect(id, now: now)
        case .frame(let id, let frame, let now):
            return receive(frame, from: id, now: now)
        case .undecodable(let id, let error, let now):
            let isSend = error.type == "send"
            return admit(id, now: now, requestId: error.requestId, isSend: isSend)
                ?? refuse(id, requestId: error.requestId, isSend: isSend, error.code, error.message)
        case .oversized(let id, let bytes, let requestId, let isSend, let now):
            return admit(id, now: now, requestId: requestId, isSend: isSend)
                ?? refuse(
                    id, requestId: requestId, isSend: isSend, .tooLarge,
                    "the frame is \(bytes) bytes; the limit is \(limits.maxFrameBytes)")
        case .binary(let id, let now):
            return admit(id, now: now, requestId: nil, isSend: false)
                ?? refuse(id, requestId: nil, isSend: false, .binaryNotSupported, "send frames as JSON text messages")
        case .tokenChecked(let id, let requestId, let purpose, let result, let now):
            return tokenChecked(id, requestId: requestId, purpose: purpose, result: result, now: now)
        case .disconnected(let id, _):
            return remove(id)
        case .tick(let now):
            return tick(now: now)
        case .shutdown:
            isShuttingDown = true
            return sessions.keys.sorted().flatMap {
                close($0, .serverShutdown, "the server is shutting down; reconnect in a moment")
            }
        }
    }

    private mutating func connect(_ id: SessionID, now: Int64) -> [HubAction] {
        sessions[id] = Session(connectedAt: now, lastSeen: now, bucket: TokenBucket(burst: limits.burst, now: now))
        if isShuttingDown {
            return close(id, .serverShutdown, "the server is shutting down; reconnect in a moment")
        }
        return []
    }

    /// Counts a frame against the session's rate limit. Returns what to do instead of processing the frame
    /// (nothing for an unknown session, a refusal over the limit), or `nil` to process it.
    private mutating func admit(_ id: SessionID, now: Int64, requestId: Int?, isSend: Bool) -> [HubAction]? {
        guard var session = sessions[id] else { return [] }
        session.lastSeen = now
        let allowed = session.bucket.take(now: now, ratePerSecond: limits.ratePerSecond, burst: limits.burst)
        sessions[id] = session
        guard allowed else {
            return refuse(
                id, requestId: requestId, isSend: isSend, .rateLimited,
                "more than \(limits.burst) frames at once or \(formatRate(limits.ratePerSecond)) per second; slow down")
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
        if now >= login.expiresAt {
            let isSend = if case .send = frame { true } else { false }
            return refuse(id, requestId: frame.requestId, isSend: isSend, .tokenExpired, "the session's token expired")
                + close(id, .tokenExpired, "the token expired; log in again with a new token")
        }
        switch frame {
        case .login:
            return []  // handled above
        case .send(let send):
            return relay(send, from: id, user: login.userId, now: now)
        case .renew(let renew):
            guard !session.verifying else {
                return refuse(id, requestId: renew.id, isSend: false, .invalidFrame, "a token check is already running")
            }
            sessions[id]?.verifying = true
            return [.verifyToken(id, requestId: renew.id, token: renew.token, purpose: .renew)]
        case .users(let request):
            return [.send(id, .presence(.init(id: request.id, online: onlineUsers)))]
        case .subscribe(let request):
            sessions[id]?.subscribed = true
            return [.send(id, .presence(.init(id: request.id, online: onlineUsers)))]
        case .unsubscribe(let request):
            sessions[id]?.subscribed = false
            return [.send(id, .presence(.init(id: request.id, online: onlineUsers)))]
        case .ping(let request):
            return [.send(id, .pong(.init(id: request.id, serverTime: now)))]
        case .logout:
            return close(id, .loggedOut, "logged out")
        }
    }

    private mutating func startLogin(_ id: SessionID, session: Session, _ login: ClientFrame.Login) -> [HubAction] {
        if session.login != nil {
            return refuse(
                id, requestId: login.id, isSend: false, .alreadyLoggedIn,
                "this session is already logged in; use \"renew\" to change its token")
        }
        if session.verifying {
            return refuse(id, requestId: login.id, isSend: false, .invalidFrame, "a login is already being checked")
        }
        if login.token.isEmpty {
            return refuse(id, requestId: login.id, isSend: false, .missingToken, "the login frame has an empty token")
        }
        sessions[id]?.verifying = true
        return [.verifyToken(id, requestId: login.id, token: login.token, purpose: .login)]
    }

    private mutating func tokenChecked(
        _ id: SessionID, requestId: Int?, purpose: TokenPurpose, result: TokenCheck, now: Int64
    ) -> [HubAction] {
        guard var session = sessions[id] else { return [] }
        session.verifying = false
        sessions[id] = session
        let userId: String
        let expiresAt: Int64
        switch result {
        case .invalid(let code, let message):
            return refuse(id, requestId: requestId, isSend: false, code, message)
        case .valid(let user, let expiry):
            userId = user
            expiresAt = expiry
        }
        guard expiresAt > now else {
            return refuse(
                id, requestId: requestId, isSend: false, .tokenExpired,
                "the token expired \((now - expiresAt) / 1000) s ago; get a new one")
        }
        switch purpose {
        case .renew:
            guard let login = session.login else { return [] }
            guard login.userId == userId else {
                return refuse(
                    id, requestId: requestId, isSend: false, .userMismatch,
                    "the new token is for user \(userId), this session is user \(login.userId)")
            }
            sessions[id]?.login = Login(userId: userId, expiresAt: expiresAt)
            return [.send(id, .renewed(.init(id: requestId, expiresAt: expiresAt)))]
                + tokenNotice(id, now: now)
        case .login:
            guard session.login == nil else { return [] }
            let existing = userSessions[userId] ?? []
            guard existing.count < limits.maxSessionsPerUser else {
                return refuse(
                    id, requestId: requestId, isSend: false, .tooManySessions,
                    "user \(userId) already has \(existing.count) sessions, the most this server allows")
            }
            sessions[id]?.login = Login(userId: userId, expiresAt: expiresAt)
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
            actions += deliverHeld(to: userId, session: id, now: now)
            actions += tokenNotice(id, now: now)
            return actions
        }
    }

    // MARK: - Relay

    private mutating func relay(_ send: ClientFrame.Send, from id: SessionID, user: String, now: Int64) -> [HubAction] {
        func fail(_ reason: SignalErrorCode, _ message: String) -> [HubAction] {
            [.send(id, .answer(.init(id: send.id, result: .failed, reason: reason, message: message)))]
        }
        guard SignalProtocol.isValidUserId(send.to) else {
            return fail(.invalidTarget, "\"to\" must be 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        guard send.to != user else {
            return fail(.invalidTarget, "a user cannot send to itself")
        }
        let ttl = send.ttl ?? 0
        guard ttl >= 0 else {
            return fail(.invalidFrame, "\"ttl\" must be 0 or more seconds")
        }
        let messageId = makeMessageId()
        if let targets = userSessions[send.to], !targets.isEmpty {
            let message = ServerFrame.message(.init(from: user, body: send.body, sentAt: now, messageId: messageId))
            return targets.map { .send($0, message) }
                + copies(of: send, from: id, user: user, messageId: messageId, now: now)
                + [
                    .send(
                        id,
                        .answer(.init(id: send.id, result: .delivered, messageId: messageId, sessions: targets.count)))
                ]
        }
        guard ttl > 0 else {
            return fail(.peerOffline, "user \(send.to) is offline")
        }
        let queue = held[send.to] ?? []
        guard queue.count < limits.maxHeldPerUser else {
            return fail(
                .queueFull, "user \(send.to) is offline and already has \(queue.count) held messages, the most kept")
        }
        let appliedTTL = min(ttl, limits.maxTTLSeconds)
        held[send.to] =
            queue + [
                HeldMessage(
                    messageId: messageId, from: user, body: send.body, sentAt: now,
                    expiresAt: now + Int64(appliedTTL) * 1000)
            ]
        return [.send(id, .answer(.init(id: send.id, result: .queued, messageId: messageId, ttl: appliedTTL)))]
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

    private mutating func makeMessageId() -> String {
        defer { nextMessageNumber += 1 }
        return "m-\(nextMessageNumber)"
    }

    private mutating func deliverHeld(to userId: String, session id: SessionID, now: Int64) -> [HubAction] {
        guard let queue = held.removeValue(forKey: userId) else { return [] }
        var actions: [HubAction] = []
        for message in queue {
            let outcome: ServerFrame.HeldResult.Outcome = message.expiresAt > now ? .delivered : .expired
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

    private func toUser(_ userId: String, _ frame: ServerFrame) -> [HubAction] {
        (userSessions[userId] ?? []).map { .send($0, frame) }
    }

    // MARK: - Presence and sessions

    private func presenceChanged(_ userId: String, online: Bool) -> [HubAction] {
        let frame = ServerFrame.presenceChanged(.init(userId: userId, online: online))
        return sessions.filter { $0.value.subscribed && $0.value.login != nil }.keys.sorted().map { .send($0, frame) }
    }

    /// Forgets a session; tells subscribers if its user went offline.
    private mutating func remove(_ id: SessionID) -> [HubAction] {
        guard let session = sessions.removeValue(forKey: id) else { return [] }
        guard let userId = session.login?.userId else { return [] }
        var remaining = userSessions[userId] ?? []
        remaining.removeAll { $0 == id }
        if remaining.isEmpty {
            userSessions[userId] = nil
            return presenceChanged(userId, online: false)
        }
        userSessions[userId] = remaining
        return []
    }

    private mutating func close(_ id: SessionID, _ reason: SignalErrorCode, _ message: String) -> [HubAction] {
        guard sessions[id] != nil else { return [] }
        return [
            .send(id, .closing(.init(reason: reason, message: message))),
            .close(id, code: SignalCloseCode.code(for: reason), reason: reason),
        ] + remove(id)
    }

    // MARK: - Time

    private mutating func tokenNotice(_ id: SessionID, now: Int64) -> [HubAction] {
        guard let login = sessions[id]?.login, !login.noticeSent, now >= login.expiresAt - limits.tokenNoticeMillis
        else { return [] }
        sessions[id]?.login?.noticeSent = true
        let secondsLeft = Int(max(0, login.expiresAt - now) / 1000)
        return [.send(id, .tokenWillExpire(.init(expiresAt: login.expiresAt, secondsLeft: secondsLeft)))]
    }

    private mutating func tick(now: Int64) -> [HubAction] {
        var actions: [HubAction] = []
        for id in sessions.keys.sorted() {
            guard let session = sessions[id] else { continue }
            if let login = session.login {
                if now >= login.expiresAt {
                    actions += close(id, .tokenExpired, "the token expired; log in again with a new token")
                    continue
                }
                actions += tokenNotice(id, now: now)
            } else if now - session.connectedAt >= limits.loginTimeoutMillis {
                actions += close(
                    id, .loginTimeout, "no login within \(limits.loginTimeoutMillis / 1000) s of connecting")
                continue
            }
            if now - session.lastSeen >= limits.idleTimeoutMillis {
                actions += close(id, .idleTimeout, "nothing received for \(limits.idleTimeoutMillis / 1000) s")
            }
        }
        for userId in held.keys.sorted() {
            let queue = held[userId] ?? []
            let expired = queue.filter { $0.expiresAt <= now }
            guard !expired.isEmpty else { continue }
            let kept = queue.filter { $0.expiresAt > now }
            held[userId] = kept.isEmpty ? nil : kept
            for message in expired {
                actions += toUser(
                    message.from, .heldResult(.init(messageId: message.messageId, to: userId, result: .expired)))
            }
        }
        return actions
    }

    private func formatRate(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }
}
