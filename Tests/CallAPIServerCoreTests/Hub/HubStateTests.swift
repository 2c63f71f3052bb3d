import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// The hub's routing, presence, held messages, limits and timeouts, driven directly with explicit times.
@Suite struct HubStateTests {
    var hub: HubState
    let a = SessionID(1)
    let b = SessionID(2)
    let c = SessionID(3)

    init() {
        var limits = HubLimits()
        limits.maxHeldPerUser = 2
        limits.maxTTLSeconds = 60
        limits.burst = 5
        limits.ratePerSecond = 1
        limits.maxSessionsPerUser = 2
        limits.tokenNoticeMillis = 10_000
        limits.idleTimeoutMillis = 30_000
        limits.loginTimeoutMillis = 5_000
        hub = HubState(limits: limits)
    }

    /// Connects `id` and logs it in as `user` with a token expiring at `expiresAt`.
    @discardableResult
    mutating func login(_ id: SessionID, _ user: String, now: Int64 = 0, expiresAt: Int64 = 3_600_000) -> [HubAction] {
        _ = hub.handle(.connected(id), now: now)
        let verify = hub.handle(.frame(id, .login(.init(id: 1, token: "t-\(user)"))), now: now)
        #expect(verify == [.verifyToken(id, requestId: 1, token: "t-\(user)", purpose: .login)])
        return hub.handle(
            .tokenChecked(
                id, requestId: 1, purpose: .login, result: .valid(userId: user, expiresAt: expiresAt)), now: now)
    }

    /// Message ids count up from `m-1`, each one once, across the digits' lengths.
    @Test mutating func messageIdsCountUpOnceEach() {
        let ids = (0..<1_001).map { _ in hub.makeMessageId() }
        #expect(ids == (1...1_001).map { "m-\($0)" })
    }

    func frames(_ actions: [HubAction], to id: SessionID) -> [ServerFrame] {
        actions.compactMap { if case .send(id, let frame) = $0 { frame } else { nil } }
    }

    @Test mutating func loginWelcomesWithLimitsAndExpiry() {
        let actions = login(a, "1001", now: 100, expiresAt: 900_000)
        guard case .welcome(let welcome) = frames(actions, to: a).first else {
            Issue.record("expected welcome, got \(actions)")
            return
        }
        #expect(welcome.userId == "1001")
        #expect(welcome.expiresAt == 900_000)
        #expect(welcome.limits.maxFrameBytes == 64 * 1024)
        #expect(hub.onlineUsers == ["1001"])
    }

    @Test mutating func relayStampsTheAuthenticatedSender() {
        login(a, "1001")
        login(b, "1002")
        let actions = hub.handle(.frame(a, .send(.init(id: 7, to: "1002", body: "{\"fromUserId\":666}"))), now: 50)
        #expect(
            frames(actions, to: b) == [
                .message(.init(from: "1001", body: "{\"fromUserId\":666}", sentAt: 50, messageId: "m-1"))
            ])
        #expect(
            frames(actions, to: a) == [.answer(.init(id: 7, result: .delivered, messageId: "m-1", sessions: 1))])
    }

    @Test mutating func sendingBeforeLoginFailsAndTheSessionStaysUsable() {
        _ = hub.handle(.connected(a), now: 0)
        let actions = hub.handle(.frame(a, .send(.init(id: 3, to: "1002", body: "x"))), now: 1)
        #expect(answer(actions, a)?.reason == .notLoggedIn)
        let ping = hub.handle(.frame(a, .ping(.init(id: 4))), now: 2)
        #expect(error(ping, a) == .notLoggedIn)
        login(a, "1001", now: 3)
        #expect(hub.onlineUsers == ["1001"])
    }

    @Test mutating func sendToOfflineUserWithoutTTLFailsPeerOffline() {
        login(a, "1001")
        let actions = hub.handle(.frame(a, .send(.init(id: 1, to: "1002", body: "x"))), now: 1)
        #expect(answer(actions, a)?.result == .failed)
        #expect(answer(actions, a)?.reason == .peerOffline)
    }

    @Test mutating func sendToSelfOrInvalidTargetFails() {
        login(a, "1001")
        #expect(
            answer(hub.handle(.frame(a, .send(.init(id: 1, to: "1001", body: "x"))), now: 1), a)?.reason
                == .invalidTarget)
        #expect(
            answer(hub.handle(.frame(a, .send(.init(id: 2, to: "", body: "x"))), now: 2), a)?.reason == .invalidTarget)
        #expect(
            answer(hub.handle(.frame(a, .send(.init(id: 3, to: "a b", body: "x"))), now: 3), a)?.reason
                == .invalidTarget)
    }

    @Test mutating func sendToSelfWithCopyReachesTheUsersOtherSessionsOnly() {
        login(a, "1001")
        let alone = hub.handle(.frame(a, .send(.init(id: 1, to: "1001", body: "x", copy: true))), now: 1)
        #expect(answer(alone, a)?.reason == .peerOffline, "no other session: the send fails")
        login(b, "1001")
        login(c, "1002")
        let actions = hub.handle(.frame(a, .send(.init(id: 2, to: "1001", body: "accepted", copy: true))), now: 2)
        #expect(answer(actions, a)?.result == .delivered)
        #expect(answer(actions, a)?.sessions == 1)
        let toB = frames(actions, to: b).compactMap { frame -> ServerFrame.Message? in
            if case .message(let message) = frame { message } else { nil }
        }
        #expect(toB.map(\.body) == ["accepted"])
        #expect(toB.first?.from == "1001")
        #expect(toB.first?.to == "1001")
        #expect(frames(actions, to: c).isEmpty, "another user's session gets nothing")
        #expect(frames(actions, to: a).count == 1, "the sender gets its answer only")
    }

    @Test mutating func heldMessageIsDeliveredAtLoginAndTheSenderTold() {
        login(a, "1001")
        let queued = hub.handle(.frame(a, .send(.init(id: 1, to: "1002", body: "hello", ttl: 30))), now: 1000)
        #expect(answer(queued, a) == .init(id: 1, result: .queued, messageId: "m-1", ttl: 30))
        let actions = login(b, "1002", now: 5000)
        let toB = frames(actions, to: b)
        #expect(toB.count == 2)
        #expect(toB.last == .message(.init(from: "1001", body: "hello", sentAt: 1000, messageId: "m-1", held: true)))
        #expect(frames(actions, to: a).contains(.heldResult(.init(messageId: "m-1", to: "1002", result: .delivered))))
        #expect(hub.heldCount == 0)
    }

    @Test mutating func heldMessageExpiresAndTheSenderIsTold() {
        login(a, "1001")
        _ = hub.handle(.frame(a, .send(.init(id: 1, to: "1002", body: "hello", ttl: 10))), now: 0)
        #expect(frames(hub.handle(.tick, now: 9_999), to: a).isEmpty)
        let actions = hub.handle(.tick, now: 10_000)
        #expect(frames(actions, to: a) == [.heldResult(.init(messageId: "m-1", to: "1002", result: .expired))])
        let later = login(b, "1002", now: 11_000)
        #expect(frames(later, to: b).count == 1)  // welcome only
    }

    @Test mutating func ttlIsClampedAndHeldMessagesAreBoundedPerUser() {
        login(a, "1001")
        let first = hub.handle(.frame(a, .send(.init(id: 1, to: "1002", body: "1", ttl: 9999))), now: 0)
        #expect(answer(first, a)?.ttl == 60)
        _ = hub.handle(.frame(a, .send(.init(id: 2, to: "1002", body: "2", ttl: 5))), now: 0)
        let third = hub.handle(.frame(a, .send(.init(id: 3, to: "1002", body: "3", ttl: 5))), now: 0)
        #expect(answer(third, a)?.reason == .queueFull)
        let negative = hub.handle(.frame(a, .send(.init(id: 4, to: "1003", body: "3", ttl: -1))), now: 0)
        #expect(answer(negative, a)?.reason == .invalidFrame)
    }

    @Test mutating func messagesGoToEverySessionOfTheUser() {
        login(a, "1001")
        login(b, "1002")
        login(c, "1002")
        let actions = hub.handle(.frame(a, .send(.init(id: 1, to: "1002", body: "x"))), now: 1)
        #expect(frames(actions, to: b).count == 1)
        #expect(frames(actions, to: c).count == 1)
        #expect(answer(actions, a)?.sessions == 2)
        _ = hub.handle(.disconnected(b), now: 2)
        #expect(hub.onlineUsers == ["1001", "1002"])
        let third = SessionID(9)
        _ = login(SessionID(10), "1002")  // second session again: allowed (b left)
        _ = hub.handle(.connected(third), now: 3)
        _ = hub.handle(.frame(third, .login(.init(id: 1, token: "t"))), now: 3)
        let refused = hub.handle(
            .tokenChecked(
                third, requestId: 1, purpose: .login, result: .valid(userId: "1002", expiresAt: 99_999)), now: 3)
        #expect(error(refused, third) == .tooManySessions)
    }

    @Test mutating func presenceSubscribersSeeUsersComeAndGo() {
        login(a, "1001")
        let snapshot = hub.handle(.frame(a, .subscribe(.init(id: 5))), now: 1)
        #expect(frames(snapshot, to: a) == [.presence(.init(id: 5, online: ["1001"]))])
        let online = login(b, "1002", now: 2)
        #expect(frames(online, to: a) == [.presenceChanged(.init(userId: "1002", online: true))])
        let secondDevice = login(c, "1002", now: 3)
        #expect(frames(secondDevice, to: a).isEmpty)
        #expect(frames(hub.handle(.disconnected(b), now: 4), to: a).isEmpty)
        #expect(
            frames(hub.handle(.disconnected(c), now: 5), to: a) == [
                .presenceChanged(.init(userId: "1002", online: false))
            ])
    }

    @Test mutating func tokenNoticeThenRenewalThenExpiryCloses() {
        login(a, "1001", now: 0, expiresAt: 60_000)
        _ = hub.handle(.frame(a, .ping(.init())), now: 29_000)
        #expect(frames(hub.handle(.tick, now: 49_999), to: a).isEmpty)
        #expect(
            frames(hub.handle(.tick, now: 50_000), to: a) == [
                .tokenWillExpire(.init(expiresAt: 60_000, secondsLeft: 10))
            ])
        #expect(frames(hub.handle(.tick, now: 51_000), to: a).isEmpty)  // once
        let renew = hub.handle(.frame(a, .renew(.init(id: 8, token: "new"))), now: 52_000)
        #expect(renew == [.verifyToken(a, requestId: 8, token: "new", purpose: .renew)])
        let renewed = hub.handle(
            .tokenChecked(
                a, requestId: 8, purpose: .renew, result: .valid(userId: "1001", expiresAt: 120_000)), now: 52_000)
        #expect(frames(renewed, to: a) == [.renewed(.init(id: 8, expiresAt: 120_000))])
        #expect(frames(hub.handle(.tick, now: 60_000), to: a).isEmpty)
        let expiry = hub.handle(.tick, now: 120_000)
        #expect(closing(expiry, a) == .tokenExpired)
        #expect(expiry.contains(.close(a, code: SignalCloseCode.tokenExpired, reason: .tokenExpired)))
        #expect(hub.onlineUsers.isEmpty)
    }

    @Test mutating func aRenewalToAnEarlierExpiryIsNoticedAndEnforcedAtThatExpiry() {
        login(a, "1001", now: 0, expiresAt: 3_600_000)
        // A tick first, so that the session's next visit is its idle timeout (30 s), after the new expiry.
        #expect(hub.handle(.tick, now: 5_000).isEmpty)
        _ = hub.handle(.frame(a, .renew(.init(id: 8, token: "short"))), now: 6_000)
        let renewed = hub.handle(
            .tokenChecked(
                a, requestId: 8, purpose: .renew, result: .valid(userId: "1001", expiresAt: 20_000)), now: 6_000)
        #expect(frames(renewed, to: a) == [.renewed(.init(id: 8, expiresAt: 20_000))])
        #expect(frames(hub.handle(.tick, now: 9_999), to: a).isEmpty)
        #expect(
            frames(hub.handle(.tick, now: 10_000), to: a) == [
                .tokenWillExpire(.init(expiresAt: 20_000, secondsLeft: 10))
            ])
        _ = hub.handle(.frame(a, .ping(.init())), now: 15_000)
        #expect(closing(hub.handle(.tick, now: 19_999), a) == nil)
        #expect(closing(hub.handle(.tick, now: 20_000), a) == .tokenExpired)
    }

    @Test mutating func aSessionKeptBusyIsClosedForIdlenessOnlyAfterItsLastFrame() {
        login(a, "1001", now: 0)
        for second in stride(from: Int64(10_000), through: 100_000, by: 10_000) {
            _ = hub.handle(.frame(a, .ping(.init())), now: second)
            #expect(hub.handle(.tick, now: second + 1).isEmpty)
        }
        #expect(hub.handle(.tick, now: 129_999).isEmpty)
        #expect(closing(hub.handle(.tick, now: 130_000), a) == .idleTimeout)
    }

    @Test mutating func sendWithCopyToAnotherUserCopiesItToTheSendersOtherSessionsOnlyWhenThereAreAny() {
        login(a, "1001")
        login(c, "1002")
        let alone = hub.handle(.frame(a, .send(.init(id: 1, to: "1002", body: "x", copy: true))), now: 1)
        #expect(answer(alone, a)?.result == .delivered)
        #expect(answer(alone, a)?.sessions == 1, "the answer counts the target's sessions")
        #expect(frames(alone, to: c).count == 1)
        #expect(frames(alone, to: a).count == 1, "one device: the sender gets its answer and no copy")
        login(b, "1001")
        let actions = hub.handle(.frame(a, .send(.init(id: 2, to: "1002", body: "y", copy: true))), now: 2)
        #expect(answer(actions, a)?.sessions == 1)
        let toB = frames(actions, to: b).compactMap { frame -> ServerFrame.Message? in
            if case .message(let message) = frame { message } else { nil }
        }
        #expect(toB.map(\.body) == ["y"], "the sender's other device gets the copy")
        #expect(toB.first?.to == "1002")
        #expect(frames(actions, to: a).count == 1, "the sender gets its answer only")
    }

    @Test mutating func renewalForAnotherUserIsRefused() {
        login(a, "1001", now: 0, expiresAt: 60_000)
        _ = hub.handle(.frame(a, .renew(.init(id: 8, token: "other"))), now: 1)
        let actions = hub.handle(
            .tokenChecked(a, requestId: 8, purpose: .renew, result: .valid(userId: "1002", expiresAt: 99_000)), now: 1)
        #expect(error(actions, a) == .userMismatch)
    }

    @Test mutating func expiredAndForgedTokensAreRefusedAndTheConnectionStaysOpen() {
        _ = hub.handle(.connected(a), now: 0)
        _ = hub.handle(.frame(a, .login(.init(id: 1, token: "old"))), now: 1000)
        let expired = hub.handle(
            .tokenChecked(a, requestId: 1, purpose: .login, result: .valid(userId: "1001", expiresAt: 1000)), now: 1000)
        #expect(error(expired, a) == .tokenExpired)
        _ = hub.handle(.frame(a, .login(.init(id: 2, token: "forged"))), now: 1001)
        let forged = hub.handle(
            .tokenChecked(a, requestId: 2, purpose: .login, result: .invalid(.invalidToken, "bad signature")), now: 1001
        )
        #expect(error(forged, a) == .invalidToken)
        #expect(!expired.contains { if case .close = $0 { true } else { false } })
        #expect(error(hub.handle(.frame(a, .login(.init(id: 3, token: ""))), now: 1002), a) == .missingToken)
    }

    @Test mutating func floodsAreRateLimitedPerSession() {
        login(a, "1001")
        login(b, "1002")
        var limited = 0
        for i in 0..<10 {
            let actions = hub.handle(.frame(a, .send(.init(id: i, to: "1002", body: "x"))), now: 100)
            if answer(actions, a)?.reason == .rateLimited { limited += 1 }
        }
        #expect(limited == 1)  // the burst of 5 minus the login frame; then one refusal answers the whole run
        // Other users are unaffected, and the bucket refills with time.
        #expect(
            answer(hub.handle(.frame(b, .send(.init(id: 1, to: "1001", body: "y"))), now: 100), b)?.result == .delivered
        )
        #expect(
            answer(hub.handle(.frame(a, .send(.init(id: 99, to: "1002", body: "x"))), now: 1100), a)?.result
                == .delivered)
    }

    @Test mutating func idleAndUnauthenticatedSessionsAreClosed() {
        login(a, "1001", now: 0)
        _ = hub.handle(.connected(b), now: 0)
        let early = hub.handle(.tick, now: 4_999)
        #expect(early.isEmpty)
        let loginTimeout = hub.handle(.tick, now: 5_000)
        #expect(loginTimeout.contains(.close(b, code: SignalCloseCode.loginTimeout, reason: .loginTimeout)))
        _ = hub.handle(.frame(a, .ping(.init(id: 1))), now: 20_000)
        #expect(hub.handle(.tick, now: 49_999).isEmpty)
        let idle = hub.handle(.tick, now: 50_000)
        #expect(idle.contains(.close(a, code: SignalCloseCode.idleTimeout, reason: .idleTimeout)))
    }

    @Test mutating func badInputGetsClearErrors() {
        login(a, "1001")
        let bad = FrameCoding.decodeClientFrame("{not json")
        guard case .failure(let error) = bad else {
            Issue.record("decoded")
            return
        }
        #expect(self.error(hub.handle(.undecodable(a, error), now: 1), a) == .malformedJSON)
        #expect(
            self.error(hub.handle(.oversized(a, bytes: 70_000, requestId: nil, isSend: false), now: 2), a) == .tooLarge)
        #expect(
            answer(hub.handle(.oversized(a, bytes: 70_000, requestId: 4, isSend: true), now: 2), a)?.reason == .tooLarge
        )
        #expect(self.error(hub.handle(.binary(a), now: 3), a) == .binaryNotSupported)
        login(b, "1002")
        let later = hub.handle(.frame(a, .send(.init(id: 9, to: "1002", body: "ok"))), now: 10_000)
        #expect(answer(later, a)?.result == .delivered)
    }

    @Test mutating func shutdownTellsEveryoneAndRefusesNewConnections() {
        login(a, "1001")
        _ = hub.handle(.connected(b), now: 0)
        let actions = hub.handle(.shutdown, now: 1)
        #expect(actions.contains(.close(a, code: SignalCloseCode.goingAway, reason: .serverShutdown)))
        #expect(actions.contains(.close(b, code: SignalCloseCode.goingAway, reason: .serverShutdown)))
        let late = hub.handle(.connected(c), now: 2)
        #expect(late.contains(.close(c, code: SignalCloseCode.goingAway, reason: .serverShutdown)))
    }

    func answer(_ actions: [HubAction], _ id: SessionID) -> ServerFrame.Answer? {
        for case .answer(let answer) in frames(actions, to: id) { return answer }
        return nil
    }

    func closing(_ actions: [HubAction], _ id: SessionID) -> SignalErrorCode? {
        for case .closing(let closing) in frames(actions, to: id) { return closing.reason }
        return nil
    }

    func error(_ actions: [HubAction], _ id: SessionID) -> SignalErrorCode? {
        for case .error(let error) in frames(actions, to: id) { return error.code }
        return nil
    }
}
