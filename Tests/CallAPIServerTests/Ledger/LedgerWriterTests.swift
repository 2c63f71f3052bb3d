import CallAPISignalProtocol
import Logging
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The ledger's writer: calls that end while a write runs are saved together in the next transaction, the queue
/// is bounded (a record over it is counted lost, never queued), and finishing writes what is pending.
@Suite struct LedgerWriterTests {
    /// A store whose saves wait until the test opens its gate, and that remembers the size of each save.
    actor GatedStore: LedgerStore {
        let inner: SQLLedgerStore<SQLiteLedgerStore.Runner>
        private(set) var batches: [Int] = []
        private var open = false
        private var waiting: [CheckedContinuation<Void, Never>] = []
        private var saveStarted: [CheckedContinuation<Void, Never>] = []

        init(inner: SQLLedgerStore<SQLiteLedgerStore.Runner>) { self.inner = inner }

        func openGate() {
            open = true
            for waiter in waiting { waiter.resume() }
            waiting = []
        }

        /// Returns once a save is waiting at the gate.
        func waitForASave() async {
            if !waiting.isEmpty { return }
            await withCheckedContinuation { saveStarted.append($0) }
        }

        func save(_ records: [CallRecord], events: [EmittedCallEvent]) async throws -> SavedCallEvents {
            batches.append(records.count)
            if !open {
                await withCheckedContinuation { continuation in
                    waiting.append(continuation)
                    for started in saveStarted { started.resume() }
                    saveStarted = []
                }
            }
            return try await inner.save(records, events: events)
        }

        func migrate() async throws { try await inner.migrate() }
        func calls(_ query: CallQuery) async throws -> CallPage { try await inner.calls(query) }
        func call(callId: String) async throws -> CallRecord? { try await inner.call(callId: callId) }
        func recentCalls(outcomes: [CallOutcome], limit: Int) async throws -> [CallRecord] {
            try await inner.recentCalls(outcomes: outcomes, limit: limit)
        }
        func webhookEvents(callId: String) async throws -> [StoredCallEvent] {
            try await inner.webhookEvents(callId: callId)
        }
        func saveReport(_ report: StoredCallReport) async throws -> Bool { try await inner.saveReport(report) }
        func reports(callId: String) async throws -> [StoredCallReport] { try await inner.reports(callId: callId) }
        func deleteCalls(endedBefore cutoff: Int64) async throws -> Int {
            try await inner.deleteCalls(endedBefore: cutoff)
        }
        func pendingWebhookEvents() async throws -> [StoredCallEvent] { try await inner.pendingWebhookEvents() }
        func claimWebhookEvents(leftBy nodes: [String]) async throws -> [StoredCallEvent] {
            try await inner.claimWebhookEvents(leftBy: nodes)
        }
        func releaseWebhookEvents() async throws { try await inner.releaseWebhookEvents() }
        func lastWebhookSequence() async throws -> Int64 { try await inner.lastWebhookSequence() }
        func markWebhookEventDelivered(seq: Int64, at: Int64) async throws {
            try await inner.markWebhookEventDelivered(seq: seq, at: at)
        }
        func recordWebhookFailure(seq: Int64, attempts: Int, retryAt: Int64, problem: String) async throws {
            try await inner.recordWebhookFailure(seq: seq, attempts: attempts, retryAt: retryAt, problem: problem)
        }
        func webhookEvents(since: Int64, limit: Int) async throws -> [StoredCallEvent] {
            try await inner.webhookEvents(since: since, limit: limit)
        }
        func deleteWebhookEvents(deliveredAndCreatedBefore cutoff: Int64) async throws -> Int {
            try await inner.deleteWebhookEvents(deliveredAndCreatedBefore: cutoff)
        }
        func schemaVersion() async throws -> Int { try await inner.schemaVersion() }
        func close() async throws { try await inner.close() }
    }

    /// A call to an offline user: the ledger ends it at once (`missed`), so each one is a record to write.
    static func callToAnOfflineUser(_ index: Int) -> LedgerInput {
        let body =
            "{\"message_action\":0,\"message_version\":\"1.0\",\"fromUserId\":1,\"callId\":\"call-\(index)\"}"
        return .relayed(RelayedSend(from: "1", fromSession: SessionID(1), to: "2", body: body, result: .offline))
    }

    @Test func callsEndingDuringAWriteAreSavedTogetherAndTheQueueIsBounded() async throws {
        let store = GatedStore(inner: try await SQLiteLedgerStore.open(path: nil))
        var settings = LedgerSettings()
        settings.writeQueueLimit = 3
        let metrics = ServerMetrics()
        let ledger = CallLedger(settings: settings, store: store, metrics: metrics, logger: Logger(label: "test"))
        let writer = Task { await ledger.run() }
        ledger.handle(Self.callToAnOfflineUser(0), now: 1_000)
        // The writer took call 0 and waits at the gate: three more fit the queue, the fifth does not.
        await store.waitForASave()
        for index in 1...4 { ledger.handle(Self.callToAnOfflineUser(index), now: 1_000 + Int64(index)) }
        #expect(metrics.render().contains("callapi_ledger_records_lost_total 1"))
        await store.openGate()
        let page = try await ledger.calls(CallQuery(userId: "2", limit: 10))
        #expect(Set(page.calls.map(\.callId)) == ["call-0", "call-1", "call-2", "call-3"])
        #expect(await store.batches == [1, 3])
        // Finishing writes what is still pending, then the writer returns; nothing is accepted after that.
        ledger.handle(Self.callToAnOfflineUser(5), now: 2_000)
        ledger.finish()
        ledger.handle(Self.callToAnOfflineUser(6), now: 2_001)
        await writer.value
        #expect(await store.batches == [1, 3, 1])
        #expect(metrics.render().contains("callapi_ledger_records_lost_total 2"))
    }
}
