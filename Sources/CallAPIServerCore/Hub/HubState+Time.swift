import CallAPISignalProtocol

/// The hub's deadlines: each session's next wake-up, and what a tick finds due.
extension HubState {
    /// Schedules the tick for `id`'s next deadline: the login timeout until it logs in, then its token's notice and
    /// expiry, and the idle timeout throughout. Called wherever one may move earlier: a connection, a login, a
    /// renewal. (A refused login goes back to the deadlines it had while it was checked; one that moves later is
    /// met by the earlier wake-up, which schedules the next.)
    mutating func scheduleTick(for id: SessionID) {
        guard let session = sessions[id] else { return }
        let idle = SessionDeadlines.time(limits.idleTimeoutMillis, after: session.lastSeen)
        let next: Int64
        if let login = session.login {
            next = min(idle, login.lease.nextDue(noticeMillis: limits.tokenNoticeMillis))
        } else {
            next = min(idle, SessionDeadlines.time(limits.loginTimeoutMillis, after: session.connectedAt))
        }
        sessions.schedule(id, at: next)
    }

    mutating func tick(now: Int64, into actions: inout [HubAction]) {
        // Only the sessions with a deadline due, in id order, as a visit of every session would act on them.
        for id in sessions.takeDue(now: now) {
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
            for message in expired { endExpired(message, of: userId, now: now, into: &actions) }
        }
        for (userId, ring) in ringing.takeExpired(now: now) {
            addTombstone(ring.callId, .expired, for: userId, now: now, into: &actions)
        }
        runInvitations(.tick, now: now, into: &actions)
        expireRemoteInvitations(now: now, into: &actions)
        runMatch(.tick, now: now, into: &actions)
        held.expireTombstones(now: now)
    }

    /// A held message whose time ran out: a pushed call's pushes are cancelled and a tombstone kept, and its sender
    /// hears `held_result` `expired`.
    mutating func endExpired(
        _ message: HeldMessages.Message, of userId: String, now: Int64, into actions: inout [HubAction]
    ) {
        if let callId = message.pushedCall {
            addTombstone(callId, .expired, for: userId, now: now, into: &actions)
            actions.append(.push(.cancel(callId: callId, userId: userId)))
        }
        toUser(
            message.from, .heldResult(.init(messageId: message.messageId, to: userId, result: .expired)),
            into: &actions)
    }
}
