import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import CallAPISignalProtocol
import Testing

/// The server over real sockets on an ephemeral loopback port, with bare WebSocket clients.
@Suite struct ServerEndToEndTests {
    @Test func loggedInUsersExchangeMessagesStampedWithTheRealSender() async throws {
        let server = try await TestServer.start()
        let alice = try await server.loggedIn("1001")
        let bob = try await server.loggedIn("1002")
        // The body claims another sender; the server stamps the authenticated one.
        alice.send(.send(.init(id: 7, to: "1002", body: "{\"fromUserId\":1003}", ttl: nil)))
        let received = try await bob.frame()
        guard case .message(let message) = received else { throw UnexpectedFrame(frame: received) }
        #expect(message.from == "1001")
        #expect(message.body == "{\"fromUserId\":1003}")
        let answer = try await alice.frame()
        guard case .answer(let a) = answer else { throw UnexpectedFrame(frame: answer) }
        #expect(a.id == 7 && a.result == .delivered && a.sessions == 1)
        try await server.stop()
    }

    /// The server copies a body's bytes from the send into the message instead of decoding and escaping them
    /// again: escapes its own writer never writes (`\u0041`, `\/`) arrive as the sender wrote them, relayed live
    /// and held alike, and read as the same text.
    @Test func aRelayedBodyReachesItsReceiverAsItsSenderEscapedIt() async throws {
        let server = try await TestServer.start()
        let alice = try await server.loggedIn("1001")
        let bob = try await server.loggedIn("1002")
        let escaped = #"{\"a\":\"\u0041\/b\\\"}"#
        let text = #"{"a":"A/b\"}"#
        alice.sendText(#"{"type":"send","id":1,"to":"1002","body":""# + escaped + #""}"#)
        guard case .text(let live) = try await bob.next() else { throw TimedOut(what: "message") }
        #expect(live.contains(#""body":""# + escaped + #"""#))
        guard case .message(let message) = try FrameCoding.decodeServerFrame(live).get() else {
            throw TimedOut(what: "a message frame")
        }
        #expect(message.body == text && message.from == "1001")
        guard case .answer(let delivered) = try await alice.frame() else { throw TimedOut(what: "answer") }
        #expect(delivered.result == .delivered)

        alice.sendText(#"{"type":"send","id":2,"to":"1003","ttl":30,"body":""# + escaped + #""}"#)
        guard case .answer(let queued) = try await alice.frame() else { throw TimedOut(what: "answer") }
        #expect(queued.result == .queued)
        let carol = RawSocket(url: server.url)
        carol.send(.login(.init(id: 1, token: try await server.token("1003"))))
        var held: String?
        while held == nil {
            guard case .text(let text) = try await carol.next() else { throw TimedOut(what: "held message") }
            if text.contains(#""type":"message""#) { held = text }
        }
        #expect(held?.contains(#""body":""# + escaped + #"""#) == true)
        #expect(held?.contains(#""held":true"#) == true)
        try await server.stop()
    }

    /// `event-loops`: a server on a group of its own size serves and relays, then stops and releases the group.
    @Test(arguments: [1, 3])
    func aServerOnItsOwnEventLoopsRelays(loops: Int) async throws {
        let server = try await TestServer.start { $0.eventLoops = loops }
        var users: [RawSocket] = []
        for index in 1...4 { users.append(try await server.loggedIn("20\(index)")) }
        for (index, user) in users.enumerated() {
            user.send(.send(.init(id: index, to: "20\((index + 1) % 4 + 1)", body: "hi \(index)", ttl: nil)))
        }
        for (index, user) in users.enumerated() {
            var received: [ServerFrame] = []
            for _ in 0..<2 { received.append(try await user.frame()) }
            let from = "20\((index + 3) % 4 + 1)"
            #expect(received.contains { if case .message(let m) = $0 { m.from == from } else { false } })
            #expect(received.contains { if case .answer(let a) = $0 { a.result == .delivered } else { false } })
        }
        try await server.stop()
    }

    @Test func badInputGetsClearErrorsAndTheConnectionStaysUsable() async throws {
        let server = try await TestServer.start()
        let bob = try await server.loggedIn("1002")
        let socket = RawSocket(url: server.url)
        // Before login.
        socket.send(.send(.init(id: 1, to: "1002", body: "x")))
        #expect(try await answerReason(socket) == .notLoggedIn)
        socket.send(.login(.init(id: 2, token: try await server.token("1001"))))
        _ = try await socket.frame()
        socket.sendText("{this is not json")
        #expect(try await errorCode(socket) == .malformedJSON)
        socket.sendText("{\"type\":\"teleport\",\"id\":3}")
        #expect(try await errorCode(socket) == .unknownType)
        socket.sendText("{\"type\":\"send\",\"id\":4,\"to\":\"1002\"}")
        #expect(try await answerReason(socket) == .invalidFrame)
        socket.sendText("[1,2,3]")
        #expect(try await errorCode(socket) == .invalidFrame)
        socket.sendBinary([1, 2, 3])
        #expect(try await errorCode(socket) == .binaryNotSupported)
        let big = String(repeating: "x", count: 70_000)
        socket.send(.send(.init(id: 5, to: "1002", body: big)))
        #expect(try await answerReason(socket) == .tooLarge)
        socket.send(.send(.init(id: 6, to: "1001", body: "me")))
        #expect(try await answerReason(socket) == .invalidTarget)
        socket.send(.login(.init(id: 7, token: try await server.token("1001"))))
        #expect(try await errorCode(socket) == .alreadyLoggedIn)
        // Still usable.
        socket.send(.send(.init(id: 8, to: "1002", body: "still here")))
        let answer = try await socket.frame()
        guard case .answer(let a) = answer else { throw UnexpectedFrame(frame: answer) }
        #expect(a.result == .delivered)
        _ = try await bob.frame()
        try await server.stop()
    }

    @Test func aHugeMessageClosesOnlyItsOwnSocket() async throws {
        let server = try await TestServer.start()
        let bob = try await server.loggedIn("1002")
        let flooder = try await server.loggedIn("1001")
        flooder.sendText(String(repeating: "x", count: 2 << 20))
        #expect(try await flooder.closed() == 1009)
        let carol = try await server.loggedIn("1003")
        carol.send(.send(.init(id: 1, to: "1002", body: "still fine")))
        guard case .message(let message) = try await bob.frame() else { throw TimedOut(what: "message") }
        #expect(message.from == "1003")
        try await server.stop()
    }

    @Test func expiredForgedAndMissingTokensAreRefused() async throws {
        let clock = TestClock()
        let server = try await TestServer.start(clock: clock)
        let socket = RawSocket(url: server.url)
        let shortLived = try await server.token("1001", ttl: 10)
        clock.advance(seconds: 11)
        socket.send(.login(.init(id: 1, token: shortLived)))
        #expect(try await errorCode(socket) == .tokenExpired)
        let other = try await TokenAuthority.make(
            key: .hs256(secret: "not-the-server-secret-0123456789-0123456789"), clock: clock)
        socket.send(.login(.init(id: 2, token: try await other.issue(userId: "1001", ttlSeconds: 60).token)))
        #expect(try await errorCode(socket) == .invalidToken)
        socket.send(.login(.init(id: 3, token: "garbage")))
        #expect(try await errorCode(socket) == .invalidToken)
        socket.send(.login(.init(id: 4, token: "")))
        #expect(try await errorCode(socket) == .missingToken)
        let rtc = try await server.server.authority.issue(userId: "1001", ttlSeconds: 60, channel: "room-1")
        socket.send(.login(.init(id: 5, token: rtc.token)))
        #expect(try await errorCode(socket) == .invalidToken)
        // The connection stays usable: a good token logs in.
        let welcome = try await socket.login(try await server.token("1001"))
        #expect(welcome.userId == "1001")
        try await server.stop()
    }

    @Test func floodsAreRateLimitedAndOtherUsersAreUnaffected() async throws {
        let server = try await TestServer.start {
            // Refill slow enough that no token comes back during the test, however slow the machine is.
            $0.limits.burst = 5; $0.limits.ratePerSecond = 0.0001
        }
        let flooder = try await server.loggedIn("1001")
        let bob = try await server.loggedIn("1002")
        let carol = try await server.loggedIn("1003")
        for i in 0..<10 { flooder.send(.ping(.init(id: i))) }
        var limited = 0
        // Burst 5, minus the login: four pongs, then one refusal for the whole run (refusals are coalesced).
        for _ in 0..<5 {
            if case .error(let e) = try await flooder.frame(), e.code == .rateLimited { limited += 1 }
        }
        #expect(limited == 1)
        carol.send(.send(.init(id: 1, to: "1002", body: "hi")))
        guard case .message = try await bob.frame() else { throw TimedOut(what: "message") }
        try await server.stop()
    }

    @Test func heldMessageIsDeliveredAtLoginAndTheSenderIsTold() async throws {
        let server = try await TestServer.start()
        let alice = try await server.loggedIn("1001")
        alice.send(.send(.init(id: 1, to: "1002", body: "while you were out", ttl: 30)))
        guard case .answer(let queued) = try await alice.frame() else { throw TimedOut(what: "answer") }
        #expect(queued.result == .queued && queued.ttl == 30)
        let bob = RawSocket(url: server.url)
        try await bob.login(try await server.token("1002"))
        guard case .message(let message) = try await bob.frame() else { throw TimedOut(what: "held message") }
        #expect(message.from == "1001" && message.body == "while you were out" && message.held == true)
        let result = try await alice.frame()
        #expect(result == .heldResult(.init(messageId: queued.messageId!, to: "1002", result: .delivered)))
        try await server.stop()
    }

    @Test func heldMessageExpiresAndTheSenderIsTold() async throws {
        let clock = TestClock()
        let server = try await TestServer.start(clock: clock)
        let alice = try await server.loggedIn("1001")
        alice.send(.send(.init(id: 1, to: "1002", body: "too late", ttl: 5)))
        guard case .answer(let queued) = try await alice.frame() else { throw TimedOut(what: "answer") }
        clock.advance(seconds: 6)
        await server.tick()
        let result = try await alice.frame()
        #expect(result == .heldResult(.init(messageId: queued.messageId!, to: "1002", result: .expired)))
        let bob = try await server.loggedIn("1002")
        bob.send(.ping(.init(id: 9)))
        guard case .pong = try await bob.frame() else { throw TimedOut(what: "pong first: nothing held") }
        try await server.stop()
    }

    @Test func twoSessionsOfOneUserBothReceiveAndPresenceCountsThemOnce() async throws {
        let server = try await TestServer.start()
        let watcher = try await server.loggedIn("1001")
        watcher.send(.subscribe(.init(id: 1)))
        #expect(try await watcher.frame() == .presence(.init(id: 1, online: ["1001"])))
        let phone = try await server.loggedIn("1002")
        #expect(try await watcher.frame() == .presenceChanged(.init(userId: "1002", online: true)))
        let laptop = try await server.loggedIn("1002")
        watcher.send(.send(.init(id: 2, to: "1002", body: "ring")))
        guard case .answer(let answer) = try await watcher.frame() else { throw TimedOut(what: "answer") }
        #expect(answer.sessions == 2)
        guard case .message = try await phone.frame(), case .message = try await laptop.frame() else {
            throw TimedOut(what: "both sessions")
        }
        phone.close()
        _ = try await phone.closed()
        laptop.send(.users(.init(id: 3)))
        #expect(try await laptop.frame() == .presence(.init(id: 3, online: ["1001", "1002"])))
        laptop.close()
        #expect(try await watcher.frame() == .presenceChanged(.init(userId: "1002", online: false)))
        try await server.stop()
    }

    @Test func tokenExpiryNoticeRenewalAndCloseOnExpiry() async throws {
        let clock = TestClock()
        let server = try await TestServer.start(clock: clock) { $0.limits.tokenNoticeMillis = 30_000 }
        let socket = RawSocket(url: server.url)
        try await socket.login(try await server.token("1001", ttl: 60))
        clock.advance(seconds: 31)
        await server.tick()
        guard case .tokenWillExpire(let notice) = try await socket.frame() else { throw TimedOut(what: "notice") }
        #expect(notice.secondsLeft == 29)
        socket.send(.renew(.init(id: 2, token: try await server.token("1001", ttl: 120))))
        guard case .renewed(let renewed) = try await socket.frame() else { throw TimedOut(what: "renewed") }
        #expect(renewed.expiresAt == clock.nowMillis() + 120_000)
        socket.send(.renew(.init(id: 3, token: try await server.token("1002", ttl: 120))))
        #expect(try await errorCode(socket) == .userMismatch)
        clock.advance(seconds: 121)
        await server.tick()
        #expect(
            try await socket.frame()
                == .closing(.init(reason: .tokenExpired, message: "the token expired; log in again with a new token")))
        #expect(try await socket.closed() == Int(SignalCloseCode.tokenExpired))
        try await server.stop()
    }

    @Test func idleSocketsAreDropped() async throws {
        // Time moves only when the test says, so a slow machine cannot make the login itself time out.
        let clock = TestClock()
        let server = try await TestServer.start(clock: clock) {
            $0.limits.idleTimeoutMillis = 300
            $0.limits.loginTimeoutMillis = 200
        }
        let silent = RawSocket(url: server.url)
        silent.sendBinary([1])  // answered with an error: the server has the connection
        guard case .error = try await silent.frame() else { throw TimedOut(what: "the error answer") }
        let idle = try await server.loggedIn("1001")
        clock.advance(seconds: 0.25)
        await server.tick()
        guard case .closing(let closing) = try await silent.frame() else { throw TimedOut(what: "closing") }
        #expect(closing.reason == .loginTimeout)
        clock.advance(seconds: 0.1)
        await server.tick()
        guard case .closing(let idleClosing) = try await idle.frame() else { throw TimedOut(what: "closing") }
        #expect(idleClosing.reason == .idleTimeout)
        #expect(try await idle.closed() == Int(SignalCloseCode.idleTimeout))
        try await server.stop()
    }

    @Test func shutdownTellsClientsBeforeClosing() async throws {
        let server = try await TestServer.start()
        let socket = try await server.loggedIn("1001")
        let stopping = Task { try await server.stop() }
        guard case .closing(let closing) = try await socket.frame() else { throw TimedOut(what: "closing") }
        #expect(closing.reason == .serverShutdown)
        let code = try await socket.closed()
        #expect(code == Int(SignalCloseCode.goingAway))
        try await stopping.value
    }

    func errorCode(_ socket: RawSocket) async throws -> SignalErrorCode? {
        let frame = try await socket.frame()
        guard case .error(let error) = frame else { throw UnexpectedFrame(frame: frame) }
        return error.code
    }

    func answerReason(_ socket: RawSocket) async throws -> SignalErrorCode? {
        let frame = try await socket.frame()
        guard case .answer(let answer) = frame else { throw UnexpectedFrame(frame: frame) }
        return answer.reason
    }
}
