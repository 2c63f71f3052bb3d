import CallAPISignalProtocol
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The queue table on both databases: what a restarted server reads back, delivery state, replay pages, retention.
enum CallWebhookStoreScenarios {
    static func event(_ seq: Int64, _ kind: CallEvent.Kind, callId: String, at: Int64) -> StoredCallEvent {
        StoredCallEvent(
            CallEvent(kind: kind, callId: callId, caller: "1", callee: "2", at: at, outcome: nil), seq: seq, now: at)
    }

    static func aRestartReadsBackTheUndeliveredEventsAndTheLastSequence(_ backend: LedgerBackend) async throws {
        let store = try await backend.openStore(fresh: true)
        let call = uniqueUser()
        let events = (1...3).map { event(Int64($0), [.ringing, .accepted, .connected][$0 - 1], callId: call, at: 10) }
        for event in events { try await store.insertWebhookEvent(event) }
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
        try await store.close()
    }

    static func retentionDeletesOldDeliveredEventsButKeepsTheNewest(_ backend: LedgerBackend) async throws {
        let store = try await backend.openStore(fresh: true)
        let call = uniqueUser()
        try await store.insertWebhookEvent(event(1, .ringing, callId: call, at: 100))
        try await store.insertWebhookEvent(event(2, .ended, callId: call, at: 100))
        try await store.insertWebhookEvent(event(3, .ringing, callId: call + "b", at: 100))
        try await store.markWebhookEventDelivered(seq: 1, at: 150)
        try await store.markWebhookEventDelivered(seq: 3, at: 150)
        // 1: delivered and old → deleted; 2: undelivered → kept; 3: the newest → kept, so the sequence carries on.
        #expect(try await store.deleteWebhookEvents(deliveredAndCreatedBefore: 1_000) == 1)
        #expect(try await store.webhookEvents(since: 0, limit: 10).map(\.seq) == [2, 3])
        #expect(try await store.lastWebhookSequence() == 3)
        try await store.close()
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
