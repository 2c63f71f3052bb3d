import CallAPIServerTesting
import CallAPISignalProtocol
import Foundation
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// Call webhooks from calls over real sockets to a real HTTP receiver: the receiver is down for two minutes of the
/// server's (controllable) clock, and the server is restarted on the same database during the outage. Every event
/// must arrive, once per idempotency key after de-duplication, in order per call. On SQLite (a file) and PostgreSQL.
enum CallWebhookEndToEndScenarios {
    static let secret = "webhook-test-secret"

    static func start(
        _ database: LedgerSettings.Database, receiver: CallWebhookReceiver, clock: TestClock
    ) async throws -> TestServer {
        try await TestServer.start(clock: clock) { configuration in
            configuration.ledger.database = database
            configuration.ledger.retentionDays = nil
            var webhook = CallWebhookSettings(url: receiver.url, secret: secret)
            webhook.timeoutMillis = 5000
            configuration.ledger.webhook = webhook
        }
    }

    /// Lets the server's posts and queue writes finish (nothing sleeps: retries wait for the clock).
    static func settle(_ server: TestServer) async throws {
        let webhooks = try #require(server.server.ledger?.webhooks)
        try await withTimeout(30, "the call webhooks to settle") { await webhooks.waitUntilIdle() }
    }

    /// Moves the clock by `seconds` in steps, running due retries after each.
    static func advance(_ server: TestServer, _ clock: TestClock, seconds: Int, step: Int = 5) async throws {
        for _ in 0..<(seconds / step) {
            clock.advance(seconds: Double(step))
            await server.tick()
            try await settle(server)
        }
    }

    static func completedCall(_ server: TestServer) async throws -> (callId: String, kinds: [String]) {
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let a = try await server.loggedIn(call.caller)
        let b = try await server.loggedIn(call.callee)
        try await call.call(on: a)
        try await call.send(call.body(2, from: call.callee), on: b, to: call.caller)
        try await call.send(call.body(4, from: call.caller), on: a, to: call.callee)
        a.close()
        b.close()
        return (call.callId, ["ringing", "accepted", "connected", "ended"])
    }

    static func missedCall(_ server: TestServer) async throws -> (callId: String, kinds: [String]) {
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let a = try await server.loggedIn(call.caller)
        let b = try await server.loggedIn(call.callee)
        try await call.call(on: a)
        try await call.send(call.body(1, from: call.caller, ",\"cancelCallByInternal\":1"), on: a, to: call.callee)
        a.close()
        b.close()
        return (call.callId, ["ringing", "missed", "ended"])
    }

    static func rejectedCall(_ server: TestServer) async throws -> (callId: String, kinds: [String]) {
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let a = try await server.loggedIn(call.caller)
        let b = try await server.loggedIn(call.callee)
        try await call.call(on: a)
        try await call.send(call.body(3, from: call.callee, ",\"rejectByInternal\":0"), on: b, to: call.caller)
        a.close()
        b.close()
        return (call.callId, ["ringing", "ended"])
    }

    static func nothingIsLostAcrossARestartDuringATwoMinuteReceiverOutage(
        _ database: LedgerSettings.Database
    ) async throws {
        let clock = TestClock()
        let receiver = CallWebhookReceiver()
        try await receiver.start()
        var server = try await start(database, receiver: receiver, clock: clock)
        var expected: [(callId: String, kinds: [String])] = []

        // Up: a call's events arrive at once.
        expected.append(try await completedCall(server))
        try await settle(server)
        #expect(receiver.posts.count == 4)

        // Down for two minutes of the server's clock, restarted in the middle of it.
        await receiver.stop()
        expected.append(try await completedCall(server))
        expected.append(try await missedCall(server))
        try await settle(server)
        try await advance(server, clock, seconds: 50)
        try await server.stop()
        server = try await start(database, receiver: receiver, clock: clock)
        expected.append(try await rejectedCall(server))
        try await settle(server)
        try await advance(server, clock, seconds: 70)
        #expect(receiver.posts.count == 4, "the receiver was down")

        // Back: the retries (at most a capped delay away) deliver everything.
        try await receiver.start()
        for _ in 0..<20 {
            let keys = Set(receiver.posts.compactMap(\.idempotencyKey))
            if keys.count == expected.map(\.kinds.count).reduce(0, +) { break }
            try await advance(server, clock, seconds: 10)
        }

        let posts = receiver.posts
        var firstByKey: [String: CallWebhookReceiver.Post] = [:]
        var arrival: [String] = []
        for post in posts {
            let key = try #require(post.idempotencyKey)
            if let first = firstByKey[key] {
                #expect(first.body == post.body, "a retry of \(key) carries the same body")
            } else {
                firstByKey[key] = post
                arrival.append(key)
            }
            #expect(post.signature == WebhookNotifier.signature(of: post.body, secret: secret))
            let payload = try JSONDecoder().decode(StoredCallEvent.Payload.self, from: Data(post.body.utf8))
            #expect(payload.idempotencyKey == key)
            #expect(String(payload.seq) == post.sequence)
        }
        let expectedKeys = expected.flatMap { call in call.kinds.map { "\(call.callId):\($0)" } }
        #expect(Set(arrival) == Set(expectedKeys))
        #expect(arrival.count == expectedKeys.count, "exactly once per idempotency key after de-duplication")
        for call in expected {
            let order = arrival.filter { $0.hasPrefix(call.callId + ":") }
            #expect(order == call.kinds.map { "\(call.callId):\($0)" }, "in order for call \(call.callId)")
            let sequences = order.compactMap { firstByKey[$0]?.sequence.flatMap { Int64($0) } }
            #expect(sequences == sequences.sorted())
        }
        // The outage made the server retry: attempts beyond the first were posted.
        #expect(posts.contains { ($0.attempt.flatMap { Int($0) } ?? 0) > 1 })

        // The replay endpoint has every event, delivered, by sequence number.
        let replay = try await replayPage(server, since: 0)
        #expect(Set(replay.map(\.payload.idempotencyKey)) == Set(expectedKeys))
        #expect(replay.allSatisfy { $0.deliveredAt != nil })
        #expect(replay.map(\.payload.seq) == replay.map(\.payload.seq).sorted())
        try await server.stop()
        await receiver.stop()
    }

    struct ReplayItem: Decodable {
        var attempts: Int
        var deliveredAt: Int64?
        var payload: StoredCallEvent.Payload
    }

    struct ReplayPage: Decodable {
        var events: [ReplayItem]
        var nextSince: Int64?
    }

    static func replayPage(_ server: TestServer, since: Int64, limit: Int = 100) async throws -> [ReplayItem] {
        let (status, body) = try await httpRequest(
            "\(server.httpBase)/v1/webhooks/events?since=\(since)&limit=\(limit)", headers: adminHeaders)
        #expect(status == 200)
        return try JSONDecoder().decode(ReplayPage.self, from: Data(body.utf8)).events
    }

    static let adminHeaders = ["Authorization": "Bearer test-admin-key"]

    static func aTemporaryDataDirectory() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("webhooks-\(uniqueUser())").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

@Suite(.serialized) struct SQLiteCallWebhookEndToEndTests {
    @Test func nothingIsLostAcrossARestartDuringATwoMinuteReceiverOutage() async throws {
        let directory = CallWebhookEndToEndScenarios.aTemporaryDataDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await CallWebhookEndToEndScenarios.nothingIsLostAcrossARestartDuringATwoMinuteReceiverOutage(
            .sqlite(path: directory + "/callapi-ledger.sqlite"))
    }

    @Test func theReplayEndpointPagesBySequenceAndNeedsTheAdminKey() async throws {
        let clock = TestClock()
        let receiver = CallWebhookReceiver()
        try await receiver.start()
        let server = try await CallWebhookEndToEndScenarios.start(.memory, receiver: receiver, clock: clock)
        _ = try await CallWebhookEndToEndScenarios.completedCall(server)
        try await CallWebhookEndToEndScenarios.settle(server)
        let first = try await CallWebhookEndToEndScenarios.replayPage(server, since: 0, limit: 3)
        #expect(first.map(\.payload.event) == [.ringing, .accepted, .connected])
        let rest = try await CallWebhookEndToEndScenarios.replayPage(server, since: first.last?.payload.seq ?? 0)
        #expect(rest.map(\.payload.event) == [.ended])
        #expect(rest.first?.payload.outcome == "completed")
        for (query, status) in [("since=-1", 400), ("limit=0", 400), ("limit=1001", 400)] {
            let (answer, body) = try await httpRequest(
                "\(server.httpBase)/v1/webhooks/events?\(query)", headers: CallWebhookEndToEndScenarios.adminHeaders)
            #expect(answer == status, "\(query): \(body)")
        }
        let (unauthorized, _) = try await httpRequest("\(server.httpBase)/v1/webhooks/events")
        #expect(unauthorized == 401)
        try await server.stop()
        await receiver.stop()
    }
}

/// A call that has ended stays ended: a server-placed call the caller ignored is recorded `failed` (`notPlaced`);
/// when the caller sends that call anyway and the callee rejects it, the messages are relayed as any (the callee's
/// client rings and rejects), but neither the ledger nor the webhooks change, and no key names two payloads.
@Suite struct EndedCallWebhookTests {
    @Test func aPlacedCallPlacedAfterItWasRecordedNotPlacedChangesNeitherTheLedgerNorTheWebhooks() async throws {
        let clock = TestClock()
        let receiver = CallWebhookReceiver()
        try await receiver.start()
        let server = try await TestServer.start(clock: clock) { configuration in
            configuration.ledger.database = .memory
            configuration.ledger.webhook = CallWebhookSettings(url: receiver.url, secret: nil)
            configuration.limits.match.placeWindowMillis = 2000
        }
        do {
            try await Self.placedCallPlacedLate(server, receiver, clock)
        } catch {
            Issue.record(error)
        }
        try await server.stop()
        await receiver.stop()
    }

    static func placedCallPlacedLate(_ server: TestServer, _ receiver: CallWebhookReceiver, _ clock: TestClock)
        async throws
    {
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let a = try await server.loggedIn(call.caller)
        let b = try await server.loggedIn(call.callee)
        let placed = try server.server.placeCall(
            PlaceCallOrder(caller: call.caller, callee: call.callee, media: .video)
        ).get()
        // The caller's client ignores `place_call`; 3 s later the call is recorded as never placed.
        clock.advance(seconds: 3)
        await server.tick()
        try await CallWebhookEndToEndScenarios.settle(server)
        #expect(receiver.posts.compactMap(\.idempotencyKey) == ["\(placed):ended"])

        // Then the caller sends that call after all, and the callee rejects it.
        let ring = try await call.send(
            call.body(0, from: call.caller, callId: placed, ",\"remoteUserId\":\(call.callee)"), on: a, to: call.callee)
        #expect(ring.result == .delivered)
        try await call.send(call.body(3, from: call.callee, callId: placed), on: b, to: call.caller)
        clock.advance(seconds: 1)
        await server.tick()
        try await CallWebhookEndToEndScenarios.settle(server)

        let posts = receiver.posts
        #expect(posts.compactMap(\.idempotencyKey) == ["\(placed):ended"])
        var bodyByKey: [String: String] = [:]
        for post in posts {
            let key = try #require(post.idempotencyKey)
            #expect(bodyByKey[key] == nil || bodyByKey[key] == post.body, "\(key) names two payloads")
            bodyByKey[key] = post.body
        }
        let payload = try JSONDecoder().decode(
            StoredCallEvent.Payload.self, from: Data((posts.first?.body ?? "{}").utf8))
        #expect(payload.outcome == "failed")
        let record = try await server.server.calls(CallQuery(userId: call.caller)).calls.first { $0.callId == placed }
        #expect(record?.outcome == .failed)
        #expect(record?.endReason == "notPlaced")
        a.close()
        b.close()
    }
}

@Suite(.serialized, .enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct PostgresCallWebhookEndToEndTests {
    @Test func nothingIsLostAcrossARestartDuringATwoMinuteReceiverOutage() async throws {
        try await CallWebhookEndToEndScenarios.nothingIsLostAcrossARestartDuringATwoMinuteReceiverOutage(
            try await LedgerBackend.postgres.freshDatabase())
    }
}
