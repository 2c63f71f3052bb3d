import CallAPISignalProtocol

/// The hub's logins: a `login` checked and accepted or refused, renewals, and the token's expiry notice.
extension HubState {
    mutating func startLogin(
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
        if let deviceId = login.deviceId, let problem = PushDevice.deviceIdProblem(deviceId) {
            refuse(id, requestId: login.id, isSend: false, .invalidFrame, problem, into: &actions)
            return
        }
        sessions.setPhase(.verifyingLogin(deviceId: login.deviceId), of: id)
        actions.append(.verifyToken(id, requestId: login.id, token: login.token, purpose: .login))
    }

    mutating func tokenChecked(
        _ id: SessionID, requestId: Int?, purpose: TokenPurpose, result: TokenCheck, now: Int64,
        into actions: inout [HubAction]
    ) {
        guard let session = sessions[id] else { return }
        switch (purpose, session.phase) {
        case (.login, .verifyingLogin(let deviceId)):
            switch accept(result, now: now) {
            case .refused(let code, let message):
                sessions.setPhase(.awaitingLogin, of: id)
                refuse(id, requestId: requestId, isSend: false, code, message, into: &actions)
            case .accepted(let userId, let expiresAt):
                logIn(
                    id, userId: userId, deviceId: deviceId, expiresAt: expiresAt, requestId: requestId, now: now,
                    into: &actions)
            }
        case (.renew, .loggedIn(var login)) where login.lease.renewal == .checking:
            switch accept(result, now: now) {
            case .refused(let code, let message):
                login.lease.renewalRefused()
                sessions.setPhase(.loggedIn(login), of: id)
                refuse(id, requestId: requestId, isSend: false, code, message, into: &actions)
            case .accepted(let userId, let expiresAt):
                guard login.userId == userId else {
                    login.lease.renewalRefused()
                    sessions.setPhase(.loggedIn(login), of: id)
                    refuse(
                        id, requestId: requestId, isSend: false, .userMismatch,
                        "the new token is for user \(userId), this session is user \(login.userId)", into: &actions)
                    return
                }
                login.lease.renewed(until: expiresAt)
                sessions.setPhase(.loggedIn(login), of: id)
                scheduleTick(for: id)
                enqueue(.renewed(.init(id: requestId, expiresAt: expiresAt)), to: id, into: &actions)
                tokenNotice(id, now: now, into: &actions)
            }
        default:
            break  // the session moved on while its token was checked
        }
    }

    /// What a token check means for a session: its user and expiry, or why it is refused.
    enum CheckedToken {
        case accepted(userId: String, expiresAt: Int64)
        case refused(SignalErrorCode, String)
    }

    func accept(_ result: TokenCheck, now: Int64) -> CheckedToken {
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
    mutating func logIn(
        _ id: SessionID, userId: String, deviceId: String?, expiresAt: Int64, requestId: Int?, now: Int64,
        into actions: inout [HubAction]
    ) {
        let existing = presence.sessions(of: userId)
        guard existing.count < limits.maxSessionsPerUser else {
            sessions.setPhase(.awaitingLogin, of: id)
            refuse(
                id, requestId: requestId, isSend: false, .tooManySessions,
                "user \(userId) already has \(existing.count) sessions, the most this server allows", into: &actions)
            return
        }
        sessions.setPhase(
            .loggedIn(Login(userId: userId, lease: TokenLease(expiresAt: expiresAt), deviceId: deviceId)), of: id)
        scheduleTick(for: id)
        let cameOnline = presence.loggedIn(id, as: userId)
        if case .node = topology {
            actions.append(.cluster(.online(SessionRow(session: id, userId: userId, device: deviceId))))
        }
        enqueue(
            .welcome(
                .init(
                    id: requestId, userId: userId, sessionId: id.description, expiresAt: expiresAt, serverTime: now,
                    limits: limits.wire)), to: id, into: &actions)
        if cameOnline {
            presenceChanged(userId, online: true, into: &actions)
        }
        for tombstone in liveTombstones(of: userId, now: now) {
            enqueue(.callWithdrawn(tombstone), to: id, into: &actions)
        }
        deliverHeld(to: userId, session: id, now: now, into: &actions)
        if let deviceId { deliverRinging(to: userId, device: deviceId, session: id, now: now, into: &actions) }
        tokenNotice(id, now: now, into: &actions)
    }

    mutating func tokenNotice(_ id: SessionID, now: Int64, into actions: inout [HubAction]) {
        guard var login = sessions[id]?.login,
            login.lease.due(now: now, noticeMillis: limits.tokenNoticeMillis) == .notice
        else { return }
        sessions.setPhase(.loggedIn(login), of: id)
        let expiresAt = login.lease.expiresAt
        let secondsLeft = Int(max(0, expiresAt - now) / 1000)
        enqueue(.tokenWillExpire(.init(expiresAt: expiresAt, secondsLeft: secondsLeft)), to: id, into: &actions)
    }
}
