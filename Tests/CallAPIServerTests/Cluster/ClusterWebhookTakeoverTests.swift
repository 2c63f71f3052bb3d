import CallAPI
import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import CallAPISignalClient
import CallAPITesting
import Foundation
import Logging
import Testing

/// The call webhook events a node stored but could not deliver (its receiver was down) when it stopped: they are
/// posted by a node still running, once, in order, whether the node was killed with SIGKILL (found dead by a
/// survivor's sweep) or stopped cleanly (it hands them back as it leaves).
@Suite(
    .enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing),
    .enabled(if: CLIProcess.executable != nil, "the callapi executable is not built"))
struct ClusterWebhookTakeoverTests {
    let world = SimulatedRTCWorld(clock: SystemCallClock())

    /// A completed call from `caller` on the node at `callerPort` to `callee` on the node at `calleePort`; returns
    /// its id, once the caller's node has stored its four events.
    func completedCall(
        _ caller: UInt, on callerPort: Int, to callee: UInt, on calleePort: Int, database: String
    ) async throws -> String {
        func endpoint(_ user: UInt, port: Int) async throws -> CallEndpoint {
            let signal = SignalClient(configuration: .init(url: "ws://127.0.0.1:\(port)"), logger: quietLogger)
            try await signal.login(token: try await ClusterNodeDeathTests.token("\(user)"))
            return try await .prepared(user, signal: signal, world: world)
        }
        let from = try await endpoint(caller, port: callerPort)
        let to = try await endpoint(callee, port: calleePort)
        let observer = try await ClusterNodeDeathTests.loggedIn("\(caller)9", port: callerPort)
        try await ClusterEndToEndTests.waitOnline("\(callee)", seenBy: observer)
        // And the callee's node sees the caller, or the accept it relays can be refused `peer_offline` (the race
        // ClusterCallLedgerTests met in CI).
        try await ClusterEndToEndTests.waitOnline(
            "\(caller)", seenBy: try await ClusterNodeDeathTests.loggedIn("\(callee)8", port: calleePort))
        try await from.api.call(remoteUserId: to.user, callType: .video)
        try await to.reaches(.calling)
        try await to.api.accept(remoteUserId: from.user)
        try await from.reaches(.connected)
        try await to.reaches(.connected)
        try await from.api.hangup(remoteUserId: to.user, reason: "bye")
        try await from.reaches(.prepared)
        try await to.reaches(.prepared)
        await from.api.deinitialize()
        await to.api.deinitialize()

        let store = try await PostgresLedgerStore.open(url: database, logger: Logger(label: "test.ledger"))
        defer { Task { try? await store.close() } }
        return try await withTimeout(20, "the caller's node to store the call's four events") {
            while true {
                let events = try await store.webhookEvents(since: 0, limit: 100)
                if events.count >= 4, let callId = events.last?.callId { return callId }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Runs the scenario: the call's events wait on n1 (the receiver is down), `stop` stops n1, the receiver comes
    /// back, and n2 must post them.
    func undeliveredEventsArePostedByTheNodeLeft(stopping stop: (CLIProcess) async throws -> Void) async throws {
        let database = try await LedgerBackend.freshPostgresURL()
        let receiver = CallWebhookReceiver()
        try await receiver.start()
        await receiver.stop()  // down: its port is known, and refuses connections
        let ledger = ["--ledger-database", database, "--call-webhook-url", receiver.url]
        let (n1, port1) = try await ClusterNodeDeathTests.node("w1", database: database, ledger: ledger)
        let (n2, port2) = try await ClusterNodeDeathTests.node("w2", database: database, ledger: ledger)

        let callId = try await completedCall(7301, on: port1, to: 7302, on: port2, database: database)
        try await stop(n1)
        try await receiver.start()

        let kinds = ["ringing", "accepted", "connected", "ended"]
        let posted = try await withTimeout(40, "the node left to post the call's events") {
            while true {
                let keys = receiver.posts.compactMap(\.idempotencyKey).filter { $0.hasPrefix(callId) }
                if keys.count >= kinds.count { return keys }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        // n1 is gone: n2 alone posts them, once each, in the call's order.
        #expect(posted == kinds.map { "\(callId):\($0)" })
        let store = try await PostgresLedgerStore.open(url: database, logger: Logger(label: "test.ledger"))
        try await withTimeout(10, "the deliveries to be marked") {
            while try await store.pendingWebhookEvents().contains(where: { $0.callId == callId }) {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        try await store.close()
        n2.interrupt()
        #expect(try await n2.finish() == 0)
        await receiver.stop()
    }

    @Test func theEventsOfANodeKilledWithSIGKILLArePostedByASurvivor() async throws {
        try await undeliveredEventsArePostedByTheNodeLeft { node in node.kill() }
    }

    @Test func theEventsOfANodeThatLeftCleanlyArePostedByANodeStillRunning() async throws {
        try await undeliveredEventsArePostedByTheNodeLeft { node in
            node.interrupt()
            let status = try await node.finish()
            #expect(status == 0)
        }
    }
}
