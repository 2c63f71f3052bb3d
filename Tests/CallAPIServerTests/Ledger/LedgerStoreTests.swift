import CallAPISignalProtocol
import Foundation
import Logging
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The stores on their own: schema versions, saving, paging, filters, retention. Each test runs on SQLite and,
/// where `.ci/run` started it, PostgreSQL.
enum LedgerStoreScenarios {
    static func record(
        _ callId: String, caller: String, callee: String, startedAt: Int64, outcome: CallOutcome = .completed
    ) -> CallRecord {
        CallRecord(
            callId: callId, caller: caller, callee: callee, media: .video, roomId: "r", startedAt: startedAt,
            rangAt: startedAt, acceptedAt: nil, connectedAt: nil, endedAt: startedAt + 1000, endedBy: caller,
            endReason: "test", outcome: outcome, durationMillis: 0,
            devices: [CallDevice(userId: caller, session: "s-1", deviceId: "d\"1", ending: outcome.rawValue)])
    }

    static func migrationsAreVersionedAndIdempotent(_ backend: LedgerBackend) async throws {
        let store = try await backend.openStore()
        #expect(try await store.schemaVersion() == LedgerSchema.currentVersion)
        try await store.migrate()
        let fresh = try await backend.openStore(fresh: true)
        #expect(try await fresh.schemaVersion() == LedgerSchema.currentVersion)
        try await fresh.close()
        #expect(try await store.schemaVersion() == LedgerSchema.currentVersion)
        try await store.close()
    }

    static func pagesAreNewestFirstAndCoverEveryCallOnce(_ backend: LedgerBackend) async throws {
        let store = try await backend.openStore()
        let user = uniqueUser()
        let other = uniqueUser()
        // 7 calls, two of them at the same instant (the cursor orders by call id too).
        var records = (0..<6).map {
            record("\(user)-c\($0)", caller: user, callee: other, startedAt: 1_000 + Int64($0) * 10)
        }
        records.append(record("\(user)-c9", caller: other, callee: user, startedAt: 1_050))
        try await store.save(records)
        try await store.save([records[0]])  // saving again replaces
        var seen: [String] = []
        var cursor: CallCursor?
        var pages = 0
        repeat {
            let page = try await store.calls(CallQuery(userId: user, limit: 3, cursor: cursor))
            seen += page.calls.map(\.callId)
            cursor = page.nextCursor
            pages += 1
        } while cursor != nil && pages < 10
        #expect(pages == 3)
        #expect(
            seen == ["\(user)-c9", "\(user)-c5", "\(user)-c4", "\(user)-c3", "\(user)-c2", "\(user)-c1", "\(user)-c0"])
        let first = try await store.calls(CallQuery(userId: user, limit: 1)).calls.first
        #expect(first == records[6])
        try await store.close()
    }

    /// A batch larger than one statement's rows, holding the same call more than once: every call is saved once,
    /// as its first record says (a call that ended stays ended).
    static func aLargeBatchSavesEachCallOnceAsItsFirstRecordSays(_ backend: LedgerBackend) async throws {
        let store = try await backend.openStore()
        let user = uniqueUser()
        let other = uniqueUser()
        let count = SQLLedgerStore<SQLiteLedgerStore.Runner>.rowsPerStatement * 2 + 7
        var records = (0..<count).map {
            record("\(user)-c\($0)", caller: user, callee: other, startedAt: 1_000 + Int64($0), outcome: .missed)
        }
        // The first call again, then a call of the second chunk again, each ending differently.
        records.append(record("\(user)-c0", caller: user, callee: other, startedAt: 1_000, outcome: .completed))
        records.append(record("\(user)-c70", caller: user, callee: other, startedAt: 1_070, outcome: .rejected))
        try await store.save(records)
        var saved: [String: CallOutcome] = [:]
        var cursor: CallCursor?
        repeat {
            let page = try await store.calls(CallQuery(userId: user, limit: 50, cursor: cursor))
            for call in page.calls { saved[call.callId] = call.outcome }
            cursor = page.nextCursor
        } while cursor != nil
        #expect(saved.count == count)
        #expect(saved["\(user)-c0"] == .missed)
        #expect(saved["\(user)-c70"] == .missed)
        #expect(saved["\(user)-c\(count - 1)"] == .missed)
        try await store.close()
    }

    /// A call saved once keeps that record, and an idempotency key names one event: a later ending of the same
    /// call (its id replayed) changes neither, and the events it would add are reported back.
    static func aCallThatEndedStaysEndedInTheDatabase(_ backend: LedgerBackend) async throws {
        let store = try await backend.openStore(fresh: true)
        let user = uniqueUser()
        let callId = "\(user)-once"
        func ended(_ outcome: CallOutcome) -> EmittedCallEvent {
            EmittedCallEvent(
                CallEvent(kind: .ended, callId: callId, caller: user, callee: "2", at: 10, outcome: outcome),
                emittedAt: 10)
        }
        let first = record(callId, caller: user, callee: "2", startedAt: 5, outcome: .failed)
        #expect(try await store.save([first], events: [ended(.failed)]).refused.isEmpty)
        let again = record(callId, caller: user, callee: "2", startedAt: 5, outcome: .rejected)
        #expect(
            try await store.save([again], events: [ended(.rejected)]) == SavedCallEvents(refused: [ended(.rejected)]))
        #expect(try await store.calls(CallQuery(userId: user)).calls.map(\.outcome) == [.failed])
        let events = try await store.webhookEvents(since: 0, limit: 10)
        #expect(events.map(\.seq) == [1])
        #expect(events.first?.body.contains("\"failed\"") == true)
        try await store.close()
    }

    /// A database a newer server migrated is refused with the reason, and the connection opened to read it is
    /// closed (an open one trapped when it was deinitialized: half the starts died with SIGILL).
    static func aNewerSchemaIsRefusedWithTheReason(_ backend: LedgerBackend) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("newer-\(uniqueUser()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let url = backend == .postgres ? try await LedgerBackend.freshPostgresURL() : ""
        func open() async throws -> any LedgerStore {
            backend == .postgres
                ? try await PostgresLedgerStore.open(url: url, logger: Logger(label: "test.ledger"))
                : try await SQLiteLedgerStore.open(path: path)
        }
        let store = try await open()
        _ = try await store.save([], events: [])
        _ = try await (store as? SQLLedgerStore<SQLiteLedgerStore.Runner>)?.runner.run(
            "INSERT INTO schema_version (version) VALUES (999)", [])
        _ = try await (store as? SQLLedgerStore<PostgresLedgerStore.Runner>)?.runner.run(
            "INSERT INTO schema_version (version) VALUES (999)", [])
        try await store.close()
        for _ in 0..<3 {
            do {
                let accepted = try await open()
                try await accepted.close()
                Issue.record("a newer schema was accepted")
            } catch {
                #expect("\(error)".contains("schema version 999, newer than this server's"))
            }
        }
    }

    static func filtersSelectOutcomesRoleAndTime(_ backend: LedgerBackend) async throws {
        let store = try await backend.openStore()
        let user = uniqueUser()
        let peer = uniqueUser()
        try await store.save([
            record("\(user)-a", caller: peer, callee: user, startedAt: 100, outcome: .missed),
            record("\(user)-b", caller: peer, callee: user, startedAt: 200, outcome: .cancelled),
            record("\(user)-c", caller: user, callee: peer, startedAt: 300, outcome: .missed),
            record("\(user)-d", caller: peer, callee: user, startedAt: 400, outcome: .completed),
            record("\(user)-e", caller: peer, callee: user, startedAt: 500, outcome: .busy),
        ])
        let missed = try await store.calls(.missed(userId: user, since: 150))
        #expect(missed.calls.map(\.callId) == ["\(user)-e", "\(user)-b"])
        let window = try await store.calls(CallQuery(userId: user, since: 200, until: 400))
        #expect(window.calls.map(\.callId) == ["\(user)-c", "\(user)-b"])
        let completed = try await store.calls(CallQuery(userId: user, outcomes: [.completed]))
        #expect(completed.calls.map(\.callId) == ["\(user)-d"])
        try await store.close()
    }

    static func callReportsAreOnePerDeviceBoundedPerCallAndGoWithRetention(_ backend: LedgerBackend) async throws {
        let store = try await backend.openStore(fresh: true)
        let callId = "call-\(uniqueUser())"
        func report(_ user: String, _ device: String, at: Int64, mark: String = "state.calling") -> StoredCallReport {
            StoredCallReport(
                userId: user, receivedAt: at,
                report: CallReport(
                    callId: callId, device: device, clock: ClockOffset(offsetMillis: -3, errorMillis: 2, samples: 4),
                    events: [.init(name: mark, at: at - 10, detail: "localVideoCall")]))
        }
        #expect(try await store.saveReport(report("1001", "phone", at: 10_000)))
        #expect(try await store.saveReport(report("1002", "tablet", at: 10_100)))
        // The same device again replaces its report.
        let again = report("1001", "phone", at: 10_200, mark: "state.connected")
        #expect(try await store.saveReport(again))
        #expect(try await store.reports(callId: callId) == [report("1002", "tablet", at: 10_100), again])
        for device in 2..<StoredCallReport.maxPerCall {
            #expect(try await store.saveReport(report("1002", "d\(device)", at: 10_300)))
        }
        #expect(try await !store.saveReport(report("1003", "one-too-many", at: 10_400)), "the call has its fill")
        #expect(try await store.saveReport(report("1001", "phone", at: 10_500)), "a device already there may replace")
        #expect(try await store.reports(callId: callId).count == StoredCallReport.maxPerCall)
        _ = try await store.deleteCalls(endedBefore: 10_350)
        #expect(try await store.reports(callId: callId).map(\.receivedAt) == [10_500])
        try await store.close()
    }

    static func retentionDeletesOnlyCallsThatEndedBeforeTheCutoff(_ backend: LedgerBackend) async throws {
        let store = try await backend.openStore(fresh: true)
        let user = uniqueUser()
        try await store.save([
            record("\(user)-old", caller: user, callee: "1", startedAt: 10_000),
            record("\(user)-new", caller: user, callee: "1", startedAt: 20_000),
        ])
        let deleted = try await store.deleteCalls(endedBefore: 15_000)
        #expect(deleted == 1)
        #expect(try await store.calls(CallQuery(userId: user)).calls.map(\.callId) == ["\(user)-new"])
        try await store.close()
    }
}

@Suite struct SQLiteLedgerStoreTests {
    @Test func migrationsAreVersionedAndIdempotent() async throws {
        try await LedgerStoreScenarios.migrationsAreVersionedAndIdempotent(.sqlite)
    }
    @Test func pagesAreNewestFirstAndCoverEveryCallOnce() async throws {
        try await LedgerStoreScenarios.pagesAreNewestFirstAndCoverEveryCallOnce(.sqlite)
    }
    @Test func filtersSelectOutcomesRoleAndTime() async throws {
        try await LedgerStoreScenarios.filtersSelectOutcomesRoleAndTime(.sqlite)
    }
    @Test func aLargeBatchSavesEachCallOnceAsItsFirstRecordSays() async throws {
        try await LedgerStoreScenarios.aLargeBatchSavesEachCallOnceAsItsFirstRecordSays(.sqlite)
    }
    @Test func retentionDeletesOnlyCallsThatEndedBeforeTheCutoff() async throws {
        try await LedgerStoreScenarios.retentionDeletesOnlyCallsThatEndedBeforeTheCutoff(.sqlite)
    }
    @Test func callReportsAreOnePerDeviceBoundedPerCallAndGoWithRetention() async throws {
        try await LedgerStoreScenarios.callReportsAreOnePerDeviceBoundedPerCallAndGoWithRetention(.sqlite)
    }
    @Test func aCallThatEndedStaysEndedInTheDatabase() async throws {
        try await LedgerStoreScenarios.aCallThatEndedStaysEndedInTheDatabase(.sqlite)
    }
    @Test func aNewerSchemaIsRefusedWithTheReason() async throws {
        try await LedgerStoreScenarios.aNewerSchemaIsRefusedWithTheReason(.sqlite)
    }
    @Test func aFileDatabaseKeepsCallsAcrossReopening() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(uniqueUser()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try await SQLiteLedgerStore.open(path: path)
        try await first.save([LedgerStoreScenarios.record("keep", caller: "1", callee: "2", startedAt: 5)])
        try await first.close()
        let second = try await SQLiteLedgerStore.open(path: path)
        #expect(try await second.calls(CallQuery(userId: "1")).calls.map(\.callId) == ["keep"])
        #expect(try await second.schemaVersion() == LedgerSchema.currentVersion)
        try await second.close()
    }
}

@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct PostgresLedgerStoreTests {
    @Test func migrationsAreVersionedAndIdempotent() async throws {
        try await LedgerStoreScenarios.migrationsAreVersionedAndIdempotent(.postgres)
    }
    @Test func pagesAreNewestFirstAndCoverEveryCallOnce() async throws {
        try await LedgerStoreScenarios.pagesAreNewestFirstAndCoverEveryCallOnce(.postgres)
    }
    @Test func filtersSelectOutcomesRoleAndTime() async throws {
        try await LedgerStoreScenarios.filtersSelectOutcomesRoleAndTime(.postgres)
    }
    @Test func aLargeBatchSavesEachCallOnceAsItsFirstRecordSays() async throws {
        try await LedgerStoreScenarios.aLargeBatchSavesEachCallOnceAsItsFirstRecordSays(.postgres)
    }
    @Test func retentionDeletesOnlyCallsThatEndedBeforeTheCutoff() async throws {
        try await LedgerStoreScenarios.retentionDeletesOnlyCallsThatEndedBeforeTheCutoff(.postgres)
    }
    @Test func callReportsAreOnePerDeviceBoundedPerCallAndGoWithRetention() async throws {
        try await LedgerStoreScenarios.callReportsAreOnePerDeviceBoundedPerCallAndGoWithRetention(.postgres)
    }
    @Test func aCallThatEndedStaysEndedInTheDatabase() async throws {
        try await LedgerStoreScenarios.aCallThatEndedStaysEndedInTheDatabase(.postgres)
    }
    @Test func aNewerSchemaIsRefusedWithTheReason() async throws {
        try await LedgerStoreScenarios.aNewerSchemaIsRefusedWithTheReason(.postgres)
    }
    @Test func aBadURLIsAClearError() {
        #expect(throws: LedgerStoreError.self) {
            _ = try PostgresLedgerStore.configuration(url: "mysql://x@y/z")
        }
    }
}
