import CallAPISignalProtocol
import Logging
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The queue table on both databases: what a restarted server reads back, delivery state, replay pages, retention.
enum CallWebhookStoreScenarios {
    static func event(_ kind: CallEvent.Kind, callId: String, at: Int64) -> EmittedCallEvent {
        EmittedCallEvent(
            CallEvent(kind: kind, callId: callId, caller: "1", callee: "2", at: at, outcome: nil), emittedAt: at)
    }

    static func aRestartReadsBackTheUndeliveredEventsAndTheLastSequence(_ backend: LedgerBackend) async throws {
        let store = try await backend.openStore(fresh: true)
        let call = uniqueUser()
        var events: [StoredCallEvent] = []
        for kind in [CallEvent.Kind.ringing, .accepted, .connected] {
            events.append(try #require(try await store.insertWebhookEvent(event(kind, callId: call, at: 10))))
        }
        #expect(events.map(\.seq) == [1, 2, 3])
        #expect(
            events.map(\.body)
                == events.map {
                    StoredCallEvent(
                        CallEvent(kind: $0.kind, callId: call, caller: "1", callee: "2", at: 10, outcome: nil),
                        seq: $0.seq, now: 10
                    ).body
                })
        try await store.markWebhookEventDelivered(seq: 1, at: 20)
        try await store.recordWebhookFailure(seq: 2, attempts: 3, retryAt: 9_000, problem: "the receiver answered 503")
        #expect(try await store.lastWebhookSequence() == 3)
        var expected = Array(events.dropFirst())
        expected[0].attempts = 3
        expected[0].nextAttemptAt = 9_000
        expected[0].lastError = "the receiver answered 503"
        #expect(try await store.pendingWebhookEvents() == expected)
        let replay = try await store.webhookEvents(since: 0, limit: 2)
        #expect(replay.map(\.seq) == [1, 2])
        #expect(replay.first?.deliveredAt == 20)
        #expect(try await store.webhookEvents(since: 2, limit: 10).map(\.seq) == [3])
        // The next event carries the sequence on, and one whose key is used takes no number.
        #expect(try await store.insertWebhookEvent(event(.connected, callId: call, at: 30)) == nil)
        #expect(try await store.insertWebhookEvent(event(.ended, callId: call, at: 30))?.seq == 4)
        try await store.close()
    }

    static func retentionDeletesOldDeliveredEventsButKeepsTheNewest(_ backend: LedgerBackend) async throws {
        let store = try await backend.openStore(fresh: true)
        let call = uniqueUser()
        try await store.insertWebhookEvent(event(.ringing, callId: call, at: 100))
        try await store.insertWebhookEvent(event(.ended, callId: call, at: 100))
        try await store.insertWebhookEvent(event(.ringing, callId: call + "b", at: 100))
        try await store.markWebhookEventDelivered(seq: 1, at: 150)
        try await store.markWebhookEventDelivered(seq: 3, at: 150)
        // 1: delivered and old → deleted; 2: undelivered → kept; 3: the newest → kept, so the sequence carries on.
        #expect(try await store.deleteWebhookEvents(deliveredAndCreatedBefore: 1_000) == 1)
        #expect(try await store.webhookEvents(since: 0, limit: 10).map(\.seq) == [2, 3])
        #expect(try await store.lastWebhookSequence() == 3)
        try await store.close()
    }
}

/// Servers sharing one PostgreSQL (a cluster, docs/scale-out.md) number their events from the same table: no number
/// is given out twice, none is skipped, and each server's events keep their order.
@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct SharedWebhookNumberingTests {
    @Test func serversSavingAtOnceNeverShareANumberAndKeepTheirOrder() async throws {
        let url = try await LedgerBackend.freshPostgresURL()
        let stores: [any LedgerStore] = [
            try await PostgresLedgerStore.open(url: url, logger: Logger(label: "test.ledger")),
            try await PostgresLedgerStore.open(url: url, logger: Logger(label: "test.ledger")),
        ]
        let batches = 20
        let saved = try await withThrowingTaskGroup(of: [StoredCallEvent].self) { group in
            for (index, store) in stores.enumerated() {
                group.addTask {
                    var stored: [StoredCallEvent] = []
                    for batch in 0..<batches {
                        let call = "node\(index)-call\(batch)"
                        let events = [CallEvent.Kind.ringing, .accepted, .ended].map {
                            CallWebhookStoreScenarios.event($0, callId: call, at: Int64(batch))
                        }
                        stored += try await store.save([], events: events).stored
                    }
                    return stored
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let numbers = saved.flatMap { $0.map(\.seq) }
        #expect(numbers.sorted() == Array(1...Int64(2 * batches * 3)))
        for events in saved {
            #expect(events.map(\.seq) == events.map(\.seq).sorted())
            #expect(events.allSatisfy { $0.body.contains("\"seq\":\($0.seq)") })
        }
        let replay = try await stores[0].webhookEvents(since: 0, limit: 1000)
        #expect(replay.map(\.seq) == Array(1...Int64(2 * batches * 3)))
        for store in stores { try await store.close() }
    }
}

/// Which node of a cluster posts an undelivered event: the node that stored it, then the one that took it over.
@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct WebhookEventOwnershipTests {
    @Test func eachUndeliveredEventIsTakenByOneNodeAndOnlyFromANodeThatIsGone() async throws {
        let url = try await LedgerBackend.freshPostgresURL()
        func store(_ owner: String?) async throws -> any LedgerStore {
            try await PostgresLedgerStore.open(url: url, owner: owner, logger: Logger(label: "test.ledger"))
        }
        let (a, b, c) = (try await store("a"), try await store("b"), try await store("c"))
        let kinds: [CallEvent.Kind] = [.ringing, .accepted]
        for kind in kinds { try await a.insertWebhookEvent(CallWebhookStoreScenarios.event(kind, callId: "A1", at: 1)) }
        try await b.insertWebhookEvent(CallWebhookStoreScenarios.event(.ringing, callId: "B1", at: 1))

        // A node starting takes its own from a previous run, never a running node's.
        #expect(try await b.pendingWebhookEvents().map(\.callId) == ["B1"])
        #expect(try await c.pendingWebhookEvents().isEmpty)
        #expect(try await c.claimWebhookEvents(leftBy: []).isEmpty)
        // a is found dead by c's sweep: c takes a's, once; b's stay b's.
        let taken = try await c.claimWebhookEvents(leftBy: ["a"])
        #expect(taken.map(\.idempotencyKey) == ["A1:ringing", "A1:accepted"])
        #expect(try await b.claimWebhookEvents(leftBy: ["a"]).isEmpty)
        // b leaves cleanly: its events are no node's until a running node takes them.
        try await b.releaseWebhookEvents()
        #expect(try await c.claimWebhookEvents(leftBy: []).map(\.callId) == ["B1"])
        #expect(try await a.claimWebhookEvents(leftBy: []).isEmpty)
        // A single server (no node) posts every undelivered event.
        let single = try await store(nil)
        #expect(try await single.pendingWebhookEvents().count == 3)
        for store in [a, b, c, single] { try await store.close() }
    }
}

@Suite struct SQLiteCallWebhookStoreTests {
    @Test func aRestartReadsBackTheUndeliveredEventsAndTheLastSequence() async throws {
        try await CallWebhookStoreScenarios.aRestartReadsBackTheUndeliveredEventsAndTheLastSequence(.sqlite)
    }
    @Test func retentionDeletesOldDeliveredEventsButKeepsTheNewest() async throws {
        try await CallWebhookStoreScenarios.retentionDeletesOldDeliveredEventsButKeepsTheNewest(.sqlite)
    }
}

@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct PostgresCallWebhookStoreTests {
    @Test func aRestartReadsBackTheUndeliveredEventsAndTheLastSequence() async throws {
        try await CallWebhookStoreScenarios.aRestartReadsBackTheUndeliveredEventsAndTheLastSequence(.postgres)
    }
    @Test func retentionDeletesOldDeliveredEventsButKeepsTheNewest() async throws {
        try await CallWebhookStoreScenarios.retentionDeletesOldDeliveredEventsButKeepsTheNewest(.postgres)
    }
}
