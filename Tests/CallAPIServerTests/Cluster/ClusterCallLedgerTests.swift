import CallAPI
import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import CallAPITesting
import Foundation
import Testing

/// A call between CallAPI endpoints on two nodes of a cluster, with the ledger and its webhooks on the cluster's
/// PostgreSQL: the node the call began on keeps its record and hears the other side's messages from the mailbox, so
/// the call is recorded once, with both sides, and each webhook event is posted once (docs/scale-out.md).
@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct ClusterCallLedgerTests {
    let world = SimulatedRTCWorld(clock: SystemCallClock())

    func endpoint(_ user: UInt, on server: TestServer) async throws -> CallEndpoint {
        let signal = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
        try await signal.login(token: try await server.token("\(user)"))
        return try await .prepared(user, signal: signal, world: world)
    }

    /// Two nodes on a new database, their ledger on it too, posting call webhooks to a receiver of the test's.
    func twoNodesWithWebhooks() async throws -> ([TestServer], CallWebhookReceiver) {
        let receiver = CallWebhookReceiver()
        try await receiver.start()
        let (_, servers) = try await ClusterEndToEndTests.nodes(["a", "b"]) { url, configuration in
            configuration.ledger.database = .postgres(url: url)
            configuration.ledger.webhook = CallWebhookSettings(url: receiver.url, secret: nil)
        }
        return (servers, receiver)
    }

    @Test func aCallAcrossTwoNodesIsRecordedOnceWithBothSidesAndEachWebhookEventIsPostedOnce() async throws {
        let (servers, receiver) = try await twoNodesWithWebhooks()
        let observer = try await servers[0].loggedIn("1099")
        let caller = try await endpoint(1001, on: servers[0])
        let callee = try await endpoint(1002, on: servers[1])
        try await ClusterEndToEndTests.waitOnline("1002", seenBy: observer)
        // The callee's node must know the caller is online too, or the accept it relays is refused as `peer_offline`
        // (a presence read every 200 ms; the accept can come first).
        try await ClusterEndToEndTests.waitOnline("1001", seenBy: try await servers[1].loggedIn("1098"))

        try await caller.api.call(remoteUserId: callee.user, callType: .video)
        try await callee.reaches(.calling)
        try await callee.api.accept(remoteUserId: caller.user)
        try await caller.reaches(.connected)
        try await callee.reaches(.connected)
        try await callee.api.hangup(remoteUserId: caller.user, reason: "bye")
        try await caller.reaches(.prepared)

        // The caller's node, where the call began, wrote the record before answering; the other reads the same.
        let fromA = try await servers[0].server.calls(CallQuery(userId: "1001", limit: 10)).calls
        let call = try #require(fromA.first, "the caller's node did not record the call")
        #expect(fromA.count == 1)
        let fromB = try await servers[1].server.calls(CallQuery(userId: "1002", limit: 10)).calls
        #expect(fromB.map(\.callId) == [call.callId])
        #expect(call.outcome == .completed)
        #expect(call.acceptedAt != nil && call.endedBy == "1002")
        #expect(Set(call.devices.map(\.userId)) == ["1001", "1002"])

        for server in servers { try await CallWebhookEndToEndScenarios.settle(server) }
        let keys = receiver.posts.compactMap(\.idempotencyKey).filter { $0.hasPrefix(call.callId) }
        let kinds = ["ringing", "accepted", "connected", "ended"]
        #expect(keys == kinds.map { "\(call.callId):\($0)" })

        await caller.api.deinitialize()
        await callee.api.deinitialize()
        for server in servers { try await server.stop() }
        await receiver.stop()
    }

    /// Both nodes record calls and number their webhook events in one table: the numbers come from the database
    /// (each node numbering from its own count gave both the same numbers, and the second node's records and
    /// events were refused by the table's key, then lost).
    @Test func callsThatBeginOnEitherNodeAreEachRecordedAndTheirEventsNumberedOnceAcrossTheCluster() async throws {
        let (servers, receiver) = try await twoNodesWithWebhooks()
        let observer = try await servers[0].loggedIn("1199")
        let onA = try await endpoint(1101, on: servers[0])
        let onB = try await endpoint(1102, on: servers[1])
        try await ClusterEndToEndTests.waitOnline("1102", seenBy: observer)
        // And node b sees 1101, or the accept 1102 relays to it is refused as `peer_offline` (seen once in CI).
        try await ClusterEndToEndTests.waitOnline("1101", seenBy: try await servers[1].loggedIn("1198"))
        var callIds: [String] = []
        // Each node in turn is where the call begins: A calls B, then B calls A.
        for (caller, callee) in [(onA, onB), (onB, onA), (onA, onB), (onB, onA)] {
            try await caller.api.call(remoteUserId: callee.user, callType: .video)
            try await callee.reaches(.calling)
            try await callee.api.accept(remoteUserId: caller.user)
            try await caller.reaches(.connected)
            try await callee.reaches(.connected)
            try await caller.api.hangup(remoteUserId: callee.user, reason: "bye")
            try await callee.reaches(.prepared)
            try await caller.reaches(.prepared)
        }
        for server in servers { try await CallWebhookEndToEndScenarios.settle(server) }
        let calls = try await servers[0].server.calls(CallQuery(userId: "1101", limit: 10)).calls
        callIds = calls.map(\.callId)
        #expect(calls.count == 4, "calls recorded: \(calls.map(\.callId))")
        #expect(calls.allSatisfy { $0.outcome == .completed })
        #expect(Set(calls.map(\.caller)) == ["1101", "1102"])

        let posts = receiver.posts.filter { post in callIds.contains { post.idempotencyKey?.hasPrefix($0) == true } }
        #expect(posts.count == 16, "each call's ringing, accepted, connected and ended, once")
        #expect(Set(posts.compactMap(\.idempotencyKey)).count == posts.count)
        let numbers = posts.compactMap(\.sequence)
        #expect(numbers.count == posts.count && Set(numbers).count == numbers.count, "numbers: \(numbers)")

        await onA.api.deinitialize()
        await onB.api.deinitialize()
        for server in servers { try await server.stop() }
        await receiver.stop()
    }
}
