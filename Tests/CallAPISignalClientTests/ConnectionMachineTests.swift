import CallAPISignalProtocol
import Testing

@testable import CallAPISignalClient

/// The client's connection logic, driven directly with explicit times and jitter.
@Suite struct ConnectionMachineTests {
    var machine = ConnectionMachine(
        settings: .init(
            pingIntervalMillis: 15_000, livenessTimeoutMillis: 40_000, backoffBaseMillis: 200, backoffMaxMillis: 3_000,
            connectTimeoutMillis: 5_000, sendQueueLimit: 2, sendQueueTimeoutMillis: 10_000, requestTimeoutMillis: 8_000)
    )

    static let welcome = ServerFrame.welcome(
        .init(
            id: 0, userId: "1001", sessionId: "s-1", expiresAt: 999_999, serverTime: 0,
            limits: .init(maxFrameBytes: 1, maxTTL: 1, ratePerSecond: 1, burst: 1, idleTimeout: 1)))

    /// Logs in on socket 1 at time 0.
    mutating func connect() {
        #expect(
            machine.handle(.login(token: "t"), now: 0) == [.openSocket(1, server: 0), .state(.connecting(attempt: 0))])
        #expect(machine.handle(.socketOpened(socket: 1), now: 0) == [.write(1, .login(.init(id: 0, token: "t")))])
        #expect(
            machine.handle(.frame(socket: 1, Self.welcome), now: 0) == [
                .state(.connected(userId: "1001", sessionId: "s-1"))
            ])
    }

    @Test mutating func sendsAreWrittenAndAnswersCompleteThem() {
        connect()
        #expect(
            machine.handle(.send(ticket: 7, to: "1002", body: "b", ttl: 0), now: 1)
                == [.write(1, .send(.init(id: 1, to: "1002", body: "b")))])
        let answer = ServerFrame.answer(.init(id: 1, result: .failed, reason: .peerOffline, message: "offline"))
        #expect(
            machine.handle(.frame(socket: 1, answer), now: 2)
                == [.completeSend(ticket: 7, .failure(.failed(.peerOffline, "offline")))])
    }

    /// The shell wakes up at `nextDeadline` only: a tick just before it has nothing to do, a tick at it has.
    @Test mutating func theNextDeadlineIsTheFirstTickWithWorkToDo() {
        func check(_ expected: Int64, _ what: Comment) -> [ConnectionAction] {
            #expect(machine.nextDeadline == expected, what)
            var early = machine
            #expect(early.handle(.tick(jitter: 0), now: expected - 1).isEmpty, what)
            var due = machine
            let work = due.handle(.tick(jitter: 0), now: expected)
            #expect(!work.isEmpty, what)
            return work
        }
        #expect(machine.nextDeadline == nil, "never logged in: nothing waits on time")
        _ = machine.handle(.login(token: "t"), now: 0)
        _ = check(5_000, "the connect timeout")
        _ = machine.handle(.socketOpened(socket: 1), now: 0)
        _ = machine.handle(.frame(socket: 1, Self.welcome), now: 0)
        #expect(check(15_000, "an idle connection: the next ping") == [.write(1, .ping(.init(id: 1)))])
        _ = machine.handle(.send(ticket: 7, to: "1002", body: "b", ttl: 0), now: 1)
        _ = check(8_001, "the answer to a request")
        _ = machine.handle(.socketClosed(socket: 1, cause: "reset", jitter: 1), now: 100)
        _ = check(300, "the reconnect after the backoff")
        _ = machine.handle(.send(ticket: 8, to: "1002", body: "q", ttl: 0), now: 150)
        // The server stays away: attempts time out until the queued send's own deadline comes first.
        while let due = machine.nextDeadline, due < 10_150 {
            _ = machine.handle(.tick(jitter: 0), now: due)
            if case .connecting(let attempt) = machine.phase, attempt.since == due {
                _ = machine.handle(.socketClosed(socket: attempt.socket, cause: "refused", jitter: 0), now: due)
            }
        }
        let failed = check(10_150, "a send queued while disconnected")
        #expect(failed.contains { if case .completeSend(8, .failure) = $0 { true } else { false } })
        _ = machine.handle(.logout, now: 10_200)
        #expect(machine.nextDeadline == nil, "stopped: nothing waits on time")
    }

    /// The nodes of a cluster: the client stays with the server that serves it and moves to the next in the list,
    /// round, each time a connection is lost or cannot be made (docs/scale-out.md).
    @Test mutating func aLostConnectionMovesToTheNextServerAndAServingOneIsKept() {
        machine = ConnectionMachine(
            settings: .init(
                pingIntervalMillis: 15_000, livenessTimeoutMillis: 40_000, backoffBaseMillis: 200,
                backoffMaxMillis: 3_000, connectTimeoutMillis: 5_000, sendQueueLimit: 2, sendQueueTimeoutMillis: 10_000,
                requestTimeoutMillis: 8_000, servers: 3))
        connect()
        var servers: [Int] = []
        var now: Int64 = 100
        _ = machine.handle(.socketClosed(socket: 1, cause: "node killed", jitter: 0), now: now)
        for socket in 2...5 {
            guard case .waiting(let backoff) = machine.phase else {
                Issue.record("not waiting: \(machine.phase)")
                return
            }
            now = backoff.until
            guard case .openSocket(socket, let server) = machine.handle(.tick(jitter: 0), now: now).first else {
                Issue.record("no socket opened")
                return
            }
            servers.append(server)
            _ = machine.handle(.socketClosed(socket: socket, cause: "refused", jitter: 0), now: now)
        }
        #expect(servers == [1, 2, 0, 1])
        // One that serves is kept: the next attempt after a login there opens to it again.
        guard case .waiting(let backoff) = machine.phase else { return }
        now = backoff.until
        #expect(machine.handle(.tick(jitter: 0), now: now).first == .openSocket(6, server: 2))
        _ = machine.handle(.socketOpened(socket: 6), now: now)
        _ = machine.handle(.frame(socket: 6, Self.welcome), now: now)
        #expect(machine.server == 2)
    }

    @Test mutating func reconnectBacksOffExponentiallyWithJitter() {
        connect()
        var delays: [Int64] = []
        var now: Int64 = 100
        var actions = machine.handle(.socketClosed(socket: 1, cause: "reset", jitter: 1), now: now)
        for socket in 2...7 {
            guard case .waiting(let backoff) = machine.phase else {
                Issue.record("not waiting: \(machine.phase)")
                return
            }
            delays.append(backoff.until - now)
            now = backoff.until
            actions = machine.handle(.tick(jitter: 1), now: now)
            #expect(actions.first == .openSocket(socket, server: 0))
            actions = machine.handle(.socketClosed(socket: socket, cause: "refused", jitter: 0), now: now)
        }
        // First drop: full delay (jitter 1) at attempt 0; then failed attempts with jitter 0 (half the cap).
        #expect(delays == [200, 200, 400, 800, 1500, 1500])
        _ = actions
    }

    @Test mutating func jitterSpreadsTheDelayBetweenHalfAndFull() {
        connect()
        _ = machine.handle(.socketClosed(socket: 1, cause: "reset", jitter: 0), now: 0)
        guard case .waiting(let lowBackoff) = machine.phase else { return }
        let low = lowBackoff.until
        var other = ConnectionMachine(settings: machine.settings)
        _ = other.handle(.login(token: "t"), now: 0)
        _ = other.handle(.socketOpened(socket: 1), now: 0)
        _ = other.handle(.frame(socket: 1, Self.welcome), now: 0)
        _ = other.handle(.socketClosed(socket: 1, cause: "reset", jitter: 1), now: 0)
        guard case .waiting(let highBackoff) = other.phase else { return }
        let high = highBackoff.until
        #expect(low == 100)
        #expect(high == 200)
    }

    @Test mutating func sendsWhileReconnectingAreQueuedThenFlushed() {
        connect()
        _ = machine.handle(.socketClosed(socket: 1, cause: "reset", jitter: 0), now: 0)
        #expect(machine.handle(.send(ticket: 1, to: "1002", body: "a", ttl: 0), now: 1).isEmpty)
        #expect(machine.handle(.send(ticket: 2, to: "1002", body: "b", ttl: 5), now: 1).isEmpty)
        #expect(
            machine.handle(.send(ticket: 3, to: "1002", body: "c", ttl: 0), now: 1)
                == [.completeSend(ticket: 3, .failure(.queueFull(2)))])
        _ = machine.handle(.tick(jitter: 0), now: 1_000)
        _ = machine.handle(.socketOpened(socket: 2), now: 1_000)
        let flushed = machine.handle(.frame(socket: 2, Self.welcome), now: 1_000)
        #expect(
            flushed == [
                .state(.connected(userId: "1001", sessionId: "s-1")),
                .write(2, .send(.init(id: 1, to: "1002", body: "a"))),
                .write(2, .send(.init(id: 2, to: "1002", body: "b", ttl: 5))),
            ])
    }

    @Test mutating func queuedSendsFailClearlyWhenTheServerStaysAway() {
        connect()
        _ = machine.handle(.socketClosed(socket: 1, cause: "reset", jitter: 0), now: 0)
        _ = machine.handle(.send(ticket: 1, to: "1002", body: "a", ttl: 0), now: 0)
        let actions = machine.handle(.tick(jitter: 0), now: 10_000)
        #expect(actions.contains(.completeSend(ticket: 1, .failure(.noConnection(waitedMillis: 10_000)))))
    }

    @Test mutating func requestsWhileReconnectingFailAsNotConnectedAndUnansweredSendsAsNoAnswer() {
        connect()
        _ = machine.handle(.send(ticket: 1, to: "1002", body: "a", ttl: 0), now: 0)
        #expect(machine.handle(.tick(jitter: 0), now: 8_000).contains(.completeSend(ticket: 1, .failure(.noAnswer))))
        _ = machine.handle(.socketClosed(socket: 1, cause: "reset", jitter: 0), now: 8_000)
        #expect(
            machine.handle(.presence(ticket: 2, subscribe: true), now: 8_000)
                == [.completePresence(ticket: 2, .failure(.notConnected))])
        #expect(
            machine.handle(.calls(ticket: 3, .init()), now: 8_000) == [
                .completeCalls(ticket: 3, .failure(.notConnected))
            ])
    }

    @Test mutating func inFlightSendsFailWhenTheConnectionDrops() {
        connect()
        _ = machine.handle(.send(ticket: 4, to: "1002", body: "a", ttl: 0), now: 0)
        let actions = machine.handle(.socketClosed(socket: 1, cause: "reset", jitter: 0), now: 1)
        #expect(actions.first == .completeSend(ticket: 4, .failure(.connectionLost)))
    }

    @Test mutating func tokenExpiryStopsInsteadOfReconnecting() {
        connect()
        _ = machine.handle(.frame(socket: 1, .closing(.init(reason: .tokenExpired, message: "expired"))), now: 1)
        let actions = machine.handle(.socketClosed(socket: 1, cause: "closed", jitter: 0), now: 2)
        #expect(actions == [.state(.stopped(.tokenExpired))])
    }

    @Test mutating func serverShutdownReconnects() {
        connect()
        _ = machine.handle(.frame(socket: 1, .closing(.init(reason: .serverShutdown, message: "bye"))), now: 1)
        _ = machine.handle(.socketClosed(socket: 1, cause: "closed", jitter: 0), now: 2)
        guard case .waiting = machine.phase else {
            Issue.record("expected to wait and reconnect, got \(machine.phase)")
            return
        }
    }

    @Test mutating func refusedLoginStops() {
        _ = machine.handle(.login(token: "bad"), now: 0)
        _ = machine.handle(.socketOpened(socket: 1), now: 0)
        let actions = machine.handle(
            .frame(socket: 1, .error(.init(id: 0, code: .invalidToken, message: "forged"))), now: 1)
        #expect(actions == [.closeSocket(1), .state(.stopped(.loginRefused(.invalidToken, "forged")))])
        #expect(
            machine.handle(.send(ticket: 1, to: "1002", body: "x", ttl: 0), now: 2)
                == [.completeSend(ticket: 1, .failure(.stopped(.loginRefused(.invalidToken, "forged"))))])
    }

    @Test mutating func deadConnectionsAreDetectedAndPingsSent() {
        connect()
        #expect(machine.handle(.tick(jitter: 0), now: 15_000) == [.write(1, .ping(.init(id: 1)))])
        let actions = machine.handle(.tick(jitter: 0), now: 40_000)
        #expect(actions.first == .closeSocket(1))
        guard case .waiting = machine.phase else {
            Issue.record("expected to reconnect")
            return
        }
    }

    @Test mutating func theClockOffsetComesFromTheLoginThenFromEachPingWithTheSmallestRoundTrip() {
        // The server's clock is 5 s ahead of this one.
        #expect(machine.clock.estimate == nil)
        _ = machine.handle(.login(token: "t"), now: 100)
        _ = machine.handle(.socketOpened(socket: 1), now: 100)
        var welcome = Self.welcome
        if case .welcome(var frame) = welcome {
            frame.serverTime = 5_130  // read 30 ms after the login left; the answer took 50 ms more
            welcome = .welcome(frame)
        }
        _ = machine.handle(.frame(socket: 1, welcome), now: 180)
        #expect(machine.clock.estimate == ClockOffset(offsetMillis: 4_990, errorMillis: 40, samples: 1))
        // A ping with a 10 ms round trip, read by the server at its midpoint: a tighter estimate.
        #expect(machine.handle(.tick(jitter: 0), now: 15_180) == [.write(1, .ping(.init(id: 1)))])
        _ = machine.handle(.frame(socket: 1, .pong(.init(id: 1, serverTime: 20_185))), now: 15_190)
        #expect(machine.clock.estimate == ClockOffset(offsetMillis: 5_000, errorMillis: 5, samples: 2))
        // A slower ping does not displace it; an answer to no ping is not a sample.
        _ = machine.handle(.tick(jitter: 0), now: 30_190)
        _ = machine.handle(.frame(socket: 1, .pong(.init(id: 2, serverTime: 35_290))), now: 30_390)
        _ = machine.handle(.frame(socket: 1, .pong(.init(id: 9, serverTime: 0))), now: 30_400)
        #expect(machine.clock.estimate == ClockOffset(offsetMillis: 5_000, errorMillis: 5, samples: 3))
    }

    @Test func theEstimateFollowsTheLastSamplesOnly() {
        var clock = ClockOffsetEstimator()
        clock.sample(sentAt: 0, serverTime: 1_001, receivedAt: 2)  // 2 ms round trip, offset 1000
        for second in 1...ClockOffsetEstimator.capacity {
            let sent = Int64(second) * 15_000
            clock.sample(sentAt: sent, serverTime: sent + 2_010, receivedAt: sent + 20)  // 20 ms, offset 2000
        }
        #expect(clock.estimate == ClockOffset(offsetMillis: 2_000, errorMillis: 10, samples: 8))
        clock.sample(sentAt: 500_000, serverTime: 0, receivedAt: 499_999)
        #expect(clock.samples.count == ClockOffsetEstimator.capacity, "an answer before its request is no sample")
    }

    @Test mutating func sendingBeforeLoginFails() {
        #expect(
            machine.handle(.send(ticket: 1, to: "1002", body: "x", ttl: 0), now: 0)
                == [.completeSend(ticket: 1, .failure(.notLoggedIn))])
    }

    @Test mutating func aSubscriptionRefusedBeforeLoginIsNotMadeAtLogin() {
        #expect(
            machine.handle(.presence(ticket: 1, subscribe: true), now: 0)
                == [.completePresence(ticket: 1, .failure(.notLoggedIn))])
        connect()
        #expect(machine.login?.subscribed == false)
    }

    @Test mutating func aSubscriptionAskedWhileReconnectingIsMadeOnTheNextConnection() {
        connect()
        _ = machine.handle(.socketClosed(socket: 1, cause: "reset", jitter: 0), now: 0)
        _ = machine.handle(.presence(ticket: 1, subscribe: true), now: 1)
        _ = machine.handle(.tick(jitter: 0), now: 1_000)
        _ = machine.handle(.socketOpened(socket: 2), now: 1_000)
        #expect(
            machine.handle(.frame(socket: 2, Self.welcome), now: 1_000) == [
                .state(.connected(userId: "1001", sessionId: "s-1")), .write(2, .subscribe(.init(id: 1))),
            ])
    }

    @Test mutating func logoutFailsPendingSendsAndStops() {
        connect()
        _ = machine.handle(.send(ticket: 1, to: "1002", body: "x", ttl: 0), now: 0)
        let actions = machine.handle(.logout, now: 1)
        #expect(
            actions == [
                .write(1, .logout(.init())), .closeSocket(1), .completeSend(ticket: 1, .failure(.stopped(.loggedOut))),
                .state(.stopped(.loggedOut)),
            ])
    }
}
