import CallAPIServer
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import Foundation
import Testing

/// `callapi serve` processes as a cluster on the real PostgreSQL, one of them killed with SIGKILL mid-session: what
/// a crash or a power cut does, with nothing said to anyone.
@Suite(
    .enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing),
    .enabled(if: CLIProcess.executable != nil, "the callapi executable is not built"))
struct ClusterNodeDeathTests {
    static let secret = "cluster-test-secret-0123456789-0123456789"
    static let adminKey = "cluster-test-admin-key"

    /// A node as its own process; returns it and its port. `ledger` are the call ledger's flags (none: no ledger).
    static func node(
        _ id: String, database: String, port: Int = 0, ledger: [String] = ["--ledger", "0"]
    ) async throws -> (CLIProcess, Int) {
        let process = try CLIProcess(
            [
                "serve", "--port", "\(port)", "--node-id", id, "--cluster-database", database,
                "--secret", secret, "--admin-key", adminKey, "--cluster-heartbeat-ms", "200",
                "--cluster-dead-after-ms", "1000",
                "--drain", "1",
            ] + ledger)
        let line = try await process.expect("listening on ws://127.0.0.1:")
        guard let portText = line.split(separator: ":").last?.prefix(while: \.isNumber), let port = Int(portText)
        else { throw TimedOut(what: "the port in \(line)") }
        return (process, port)
    }

    static func token(_ user: String) async throws -> String {
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret), clock: SystemServerClock())
        return try await authority.issue(userId: user, ttlSeconds: 3600).token
    }

    static func loggedIn(_ user: String, port: Int) async throws -> RawSocket {
        let socket = RawSocket(url: "ws://127.0.0.1:\(port)/v1/signal")
        try await socket.login(try await token(user))
        return socket
    }

    @Test func aKilledNodesUsersGoOfflineEverywhereAndAMessageForThemFollowsThemToTheNodeTheyReconnectTo()
        async throws
    {
        let database = try await LedgerBackend.freshPostgresURL()
        let (n1, port1) = try await Self.node("n1", database: database)
        let (n2, port2) = try await Self.node("n2", database: database)
        let alice = try await Self.loggedIn("4001", port: port1)
        let bob = try await Self.loggedIn("4002", port: port2)
        try await ClusterEndToEndTests.waitOnline("4002", seenBy: alice)

        n2.kill()
        let killedAt = ContinuousClock.now
        // Before the cluster finds n2 dead, bob is still online for n1: the message goes into n2's mailbox, which
        // the sweep hands on when n2 is declared dead.
        alice.send(.send(.init(id: 1, to: "4002", body: "hang-up", ttl: nil)))
        let answer = try await ClusterEndToEndTests.frame(on: alice, "the answer") {
            if case .answer(let answer) = $0, answer.id == 1 { true } else { false }
        }
        guard case .answer(let delivered) = answer else { throw UnexpectedFrame(frame: answer) }
        #expect(delivered.result == .delivered)

        _ = try await ClusterEndToEndTests.frame(on: alice, within: 10, "bob offline after the kill") {
            if case .presenceChanged(let change) = $0, change.userId == "4002", !change.online { true } else { false }
        }
        let offlineAfter = ContinuousClock.now - killedAt
        #expect(offlineAfter < .seconds(10))

        // Bob's client reconnects to the node that is left, and gets what was sent to him meanwhile.
        let bobAgain = try await Self.loggedIn("4002", port: port1)
        let message = try await ClusterEndToEndTests.frame(on: bobAgain, "the message sent during the kill") {
            if case .message = $0 { true } else { false }
        }
        guard case .message(let held) = message else { throw UnexpectedFrame(frame: message) }
        #expect(held.body == "hang-up" && held.from == "4001" && held.messageId == delivered.messageId)
        _ = bob
        n1.interrupt()
        #expect(try await n1.finish() == 0)
    }

    /// The client library with both nodes' URLs: when its node is killed it logs in to the other by itself, and the
    /// message sent to it meanwhile reaches it there.
    @Test func aClientWhoseNodeIsKilledLogsInToTheNextNodeAndGetsWhatWasSentMeanwhile() async throws {
        let database = try await LedgerBackend.freshPostgresURL()
        let (n1, port1) = try await Self.node("n1", database: database)
        let (n2, port2) = try await Self.node("n2", database: database)
        let alice = try await Self.loggedIn("5001", port: port1)
        var configuration = SignalClientConfiguration(urls: [
            "ws://127.0.0.1:\(port2)", "ws://127.0.0.1:\(port1)",
        ])
        configuration.backoffBaseMillis = 100
        let bob = SignalClient(configuration: configuration)
        let events = bob.events()
        let states = bob.stateUpdates()
        try await bob.login(token: try await Self.token("5002"))
        try await ClusterEndToEndTests.waitOnline("5002", seenBy: alice)

        n2.kill()
        alice.send(.send(.init(id: 1, to: "5002", body: "are-you-there", ttl: nil)))
        // Connected again, on n1 (the only node left).
        let reconnected = try await withTimeout(10, "bob connected again") {
            var sawLoss = false
            for await state in states {
                if case .reconnecting = state { sawLoss = true }
                if sawLoss, case .connected = state { return true }
            }
            return false
        }
        #expect(reconnected)
        let body = try await withTimeout(10, "the message on the new node") {
            for await event in events {
                if case .message(let from, let body, _) = event, from == "5001" { return body }
            }
            return ""
        }
        #expect(body == "are-you-there")
        bob.logout()
        n1.interrupt()
        #expect(try await n1.finish() == 0)
    }

    /// A message held for an offline user on a node that is then killed is not lost with it: its parked copy goes to
    /// the node the user logs in to, flagged as held.
    @Test func aMessageHeldOnANodeThatIsKilledReachesItsReceiverOnAnotherNode() async throws {
        let database = try await LedgerBackend.freshPostgresURL()
        let (n1, port1) = try await Self.node("n1", database: database)
        let (n2, port2) = try await Self.node("n2", database: database)
        let alice = try await Self.loggedIn("4301", port: port1)
        alice.send(.send(.init(id: 1, to: "4302", body: "while-you-slept", ttl: 60)))
        let answer = try await ClusterEndToEndTests.frame(on: alice, "the answer") {
            if case .answer(let answer) = $0, answer.id == 1 { true } else { false }
        }
        guard case .answer(let queued) = answer else { throw UnexpectedFrame(frame: answer) }
        #expect(queued.result == .queued)
        // The parked copy is written after the answer: a ping's round trip on the same connection orders it.
        alice.send(.ping(.init(id: 2)))
        _ = try await ClusterEndToEndTests.frame(on: alice, "the pong") {
            if case .pong = $0 { true } else { false }
        }

        n1.kill()
        let bob = try await Self.loggedIn("4302", port: port2)
        let arrived = try await ClusterEndToEndTests.frame(on: bob, within: 10, "the held message after the kill") {
            if case .message = $0 { true } else { false }
        }
        guard case .message(let message) = arrived else { throw UnexpectedFrame(frame: arrived) }
        #expect(message.body == "while-you-slept" && message.held == true && message.messageId == queued.messageId)
        n2.interrupt()
        #expect(try await n2.finish() == 0)
    }
}
