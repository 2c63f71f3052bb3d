import CallAPI
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import NIOCore
import NIOPosix
import Testing

/// The Swift client against a real server over loopback sockets.
@Suite struct SignalClientTests {
    func client(_ server: TestServer, configure: (inout SignalClientConfiguration) -> Void = { _ in })
        -> SignalClient
    {
        var configuration = SignalClientConfiguration(url: "127.0.0.1:\(server.port)")
        configuration.backoffBaseMillis = 50
        configuration.backoffMaxMillis = 200
        configure(&configuration)
        return SignalClient(configuration: configuration, logger: quietLogger)
    }

    @Test func urlsGetTheSignalingPath() {
        #expect(SignalClientConfiguration.webSocketURL(from: "127.0.0.1:8080") == "ws://127.0.0.1:8080/v1/signal")
        #expect(SignalClientConfiguration.webSocketURL(from: "http://h:1/") == "ws://h:1/v1/signal")
        #expect(SignalClientConfiguration.webSocketURL(from: "wss://h/v1/signal") == "wss://h/v1/signal")
    }

    @Test func messagesReachCallAPIWithTheServerVouchedSender() async throws {
        let server = try await TestServer.start()
        let alice = client(server)
        let bob = client(server)
        let listener = RecordingSignalListener()
        bob.addListener(listener: listener)
        try await alice.login(token: try await server.token("1001"))
        try await bob.login(token: try await server.token("1002"))
        let forged = "{\"fromUserId\":1003,\"message_action\":4}"
        let outcome = try await alice.send(to: "1002", body: forged)
        guard case .delivered(_, 1) = outcome else { throw TimedOut(what: "delivered, got \(outcome)") }
        let (body, sender) = try await listener.messages.first(within: 5, "message") { _ in true }
        #expect(body == forged)
        #expect(sender?.userId == "1001")
        #expect(sender?.receivedAtMillis != nil)
        alice.logout()
        bob.logout()
        try await server.stop()
    }

    /// A client given one event loop runs there: its listener hears messages on that loop's thread.
    @Test func aClientGivenAnEventLoopReceivesOnThatLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let server = try await TestServer.start()
        let alice = client(server)
        let bob = client(server) { $0.eventLoopGroup = loop }
        let listener = LoopCheckingListener(loop: loop)
        bob.addListener(listener: listener)
        try await alice.login(token: try await server.token("1001"))
        try await bob.login(token: try await server.token("1002"))
        _ = try await alice.send(to: "1002", body: "hello")
        let onLoop = try await listener.heard.first(within: 5, "message") { _ in true }
        #expect(onLoop)
        alice.logout()
        bob.logout()
        try await server.stop()
        try await group.shutdownGracefully()
    }

    /// An app logs in, then initializes CallAPI, which adds its listener: what arrives in between is not lost.
    @Test func messagesThatArriveBeforeAnyListenerReachTheFirstListenerAdded() async throws {
        let server = try await TestServer.start()
        let alice = client(server)
        let bob = client(server)
        try await alice.login(token: try await server.token("1001"))
        try await bob.login(token: try await server.token("1002"))
        let events = bob.events()
        for body in ["first", "second"] { _ = try await alice.send(to: "1002", body: body) }
        // Bob's client has both once its event stream has: no listener was there to hear them.
        var seen = 0
        for await event in events {
            if case .message = event { seen += 1 }
            if seen == 2 { break }
        }
        let listener = RecordingSignalListener()
        bob.addListener(listener: listener)
        let later = RecordingSignalListener()
        bob.addListener(listener: later)
        // A request answered on the client's loop, which has run both adds by then.
        _ = await bob.state
        listener.finish()
        later.finish()
        let heard = await Array(listener.messages)
        #expect(heard.map(\.0) == ["first", "second"])
        #expect(heard.allSatisfy { $0.1?.userId == "1001" })
        // Kept for the first listener only: a second one hears from now on.
        #expect(await Array(later.messages).isEmpty)
        alice.logout()
        bob.logout()
        try await server.stop()
    }

    @Test func sendMessageCompletionReportsTheServersAnswer() async throws {
        let server = try await TestServer.start()
        let alice = client(server)
        try await alice.login(token: try await server.token("1001"))
        let error: (any Error)? = await withCheckedContinuation { done in
            alice.sendMessage(userId: "1002", message: "{}") { done.resume(returning: $0) }
        }
        #expect((error as? SignalClientError)?.code == .peerOffline)
        let queued = try await alice.send(to: "1002", body: "later", ttl: 30)
        guard case .queued(_, 30) = queued else { throw TimedOut(what: "queued") }
        alice.logout()
        try await server.stop()
    }

    @Test func refusedTokensStopTheClientWithAClearError() async throws {
        let server = try await TestServer.start()
        let alice = client(server)
        await #expect(
            throws: SignalClientError.stopped(.loginRefused(.invalidToken, "the token is not a well-formed JWT"))
        ) {
            try await alice.login(token: "not-a-token")
        }
        await #expect(throws: SignalClientError.self) { try await alice.send(to: "1002", body: "x") }
        try await server.stop()
    }

    @Test func presenceListAndChanges() async throws {
        let server = try await TestServer.start()
        let alice = client(server)
        let bob = client(server)
        try await alice.login(token: try await server.token("1001"))
        let events = alice.events()
        #expect(try await alice.subscribePresence() == ["1001"])
        try await bob.login(token: try await server.token("1002"))
        _ = try await events.first(within: 5, "bob online") { $0 == .presenceChanged(userId: "1002", online: true) }
        #expect(try await alice.onlineUsers() == ["1001", "1002"])
        bob.logout()
        _ = try await events.first(within: 5, "bob offline") { $0 == .presenceChanged(userId: "1002", online: false) }
        alice.logout()
        try await server.stop()
    }

    @Test func tokenExpiryNoticeAndRenewalOverTheConnection() async throws {
        let clock = TestClock()
        let server = try await TestServer.start(clock: clock) { $0.limits.tokenNoticeMillis = 30_000 }
        let alice = client(server)
        let listener = RecordingConnectionListener()
        alice.addConnectionListener(listener)
        try await alice.login(token: try await server.token("1001", ttl: 60))
        clock.advance(seconds: 40)
        await server.tick()
        _ = try await listener.events.first(within: 5, "the notice") { $0 == "willExpire" }
        let expiresAt = try await alice.renewToken(try await server.token("1001", ttl: 600))
        #expect(expiresAt == clock.nowMillis() + 600_000)
        clock.advance(seconds: 25)  // past the first token's expiry; the renewed one holds
        await server.tick()
        #expect(try await alice.send(to: "1002", body: "x", ttl: 5) != .delivered(messageId: "", sessions: 0))
        alice.logout()
        try await server.stop()
    }

    @Test func expiredSessionIsClosedAndTheClientStops() async throws {
        let clock = TestClock()
        let server = try await TestServer.start(clock: clock)
        let alice = client(server)
        let states = alice.stateUpdates()
        try await alice.login(token: try await server.token("1001", ttl: 60))
        clock.advance(seconds: 61)
        await server.tick()
        _ = try await states.first(within: 5, "stopped") { $0 == .stopped(.tokenExpired) }
        try await server.stop()
    }

    @Test func clientsReconnectAfterAServerRestartAndQueuedSendsGoThrough() async throws {
        let first = try await TestServer.start()
        let port = first.port
        let alice = client(first)
        let bob = client(first)
        let bobListener = RecordingSignalListener()
        bob.addListener(listener: bobListener)
        let aliceStates = alice.stateUpdates()
        try await alice.login(token: try await first.token("1001"))
        try await bob.login(token: try await first.token("1002"))
        try await first.stop()
        _ = try await aliceStates.first(within: 5, "reconnecting") {
            if case .reconnecting = $0 { true } else { false }
        }
        // Sent while the server is down: queued in the client, sent after the reconnect.
        let pending = Task { try await alice.send(to: "1002", body: "after restart", ttl: 30) }
        let second = try await TestServer.start(port: port)
        _ = try await aliceStates.first(within: 5, "reconnected") { $0.isConnected }
        let outcome = try await pending.value
        switch outcome {
        case .delivered, .queued: break
        }
        let (body, sender) = try await bobListener.messages.first(within: 5, "message") { _ in true }
        #expect(body == "after restart" && sender?.userId == "1001")
        alice.logout()
        bob.logout()
        try await second.stop()
    }
}

/// The code CallAPI reports for a send our client could not make is the error's fixed number (docs/adapters.md).
@Suite struct SignalClientErrorCodeTests {
    @Test func everyErrorKeepsItsNumberAndItsSentence() {
        let errors: [(SignalClientError, Int)] = [
            (.failed(.peerOffline, "offline"), 1), (.refused(.rateLimited, "slow down"), 2), (.notLoggedIn, 3),
            (.stopped(.loggedOut), 4), (.connectionLost, 5), (.queueFull(64), 6), (.notConnected, 7),
            (.noConnection(waitedMillis: 15_000), 8), (.noAnswer, 9),
        ]
        for (error, code) in errors {
            #expect(SendFailure(error) == SendFailure(code: code, message: error.description))
        }
    }
}

/// Records, for each message it hears, whether it heard it on `loop`.
private final class LoopCheckingListener: ISignalClientListener {
    let loop: any EventLoop
    let heard: AsyncStream<Bool>
    private let continuation: AsyncStream<Bool>.Continuation

    init(loop: any EventLoop) {
        self.loop = loop
        (heard, continuation) = AsyncStream.makeStream()
    }

    func onMessageReceive(message: String) { continuation.yield(loop.inEventLoop) }
    func onMessageReceive(message: String, from sender: SignalSender) { continuation.yield(loop.inEventLoop) }
}
