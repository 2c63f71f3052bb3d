import CallAPI
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import CallAPITesting
import Foundation
import Logging
import PostgresNIO
import Testing

@testable import CallAPIServer

/// A call in progress recorded by a `callapi serve` node that is killed with SIGKILL: a survivor takes its record
/// over (once), and finishes it by the messages it hears, so the ledger has one record with the call's real end
/// (issue 44, node death: leases and ring timers taken over). The posting of a killed node's call webhook events
/// is `ClusterWebhookTakeoverTests`'.
@Suite(
    .enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing),
    .enabled(if: CLIProcess.executable != nil, "the callapi executable is not built"))
struct ClusterCallTakeoverTests {
    let world = SimulatedRTCWorld(clock: SystemCallClock())

    /// Which node has the rows of the calls in progress, and whether each was accepted.
    static func liveCalls(database: String) async throws -> [(callId: String, node: String, accepted: Bool)] {
        let logger = Logger(label: "test.cluster")
        let connection = try await PostgresConnection.connect(
            configuration: try PostgresLedgerStore.configuration(url: database), id: 1, logger: logger)
        defer { Task { try? await connection.close() } }
        let rows = try await connection.query(
            "SELECT call_id, node_id, snapshot FROM callapi_cluster_calls ORDER BY call_id", logger: logger)
        var calls: [(String, String, Bool)] = []
        for try await (callId, node, snapshot) in rows.decode((String, String, String).self) {
            calls.append((callId, node, snapshot.contains("\"acceptedAt\"")))
        }
        return calls
    }

    /// The ledger's records of calls placed by `caller`.
    static func records(
        of caller: String, database: String
    ) async throws -> [(
        callId: String, outcome: String, endedBy: String?, endReason: String, acceptedAt: Int64?, durationMillis: Int64
    )] {
        let logger = Logger(label: "test.ledger")
        let connection = try await PostgresConnection.connect(
            configuration: try PostgresLedgerStore.configuration(url: database), id: 1, logger: logger)
        defer { Task { try? await connection.close() } }
        let rows = try await connection.query(
            """
            SELECT call_id, outcome, ended_by, end_reason, accepted_at, duration_ms FROM calls WHERE caller = \(caller)
            """, logger: logger)
        var found: [(String, String, String?, String, Int64?, Int64)] = []
        for try await row in rows.decode((String, String, String?, String, Int64?, Int64).self) { found.append(row) }
        return found.map {
            (callId: $0.0, outcome: $0.1, endedBy: $0.2, endReason: $0.3, acceptedAt: $0.4, durationMillis: $0.5)
        }
    }

    @Test func aCallWhoseRecordingNodeIsKilledIsTakenOverOnceAndEndsByItsHangup() async throws {
        let database = try await LedgerBackend.freshPostgresURL()
        let receiver = CallWebhookReceiver()
        try await receiver.start()
        let ledger = ["--ledger-database", database, "--call-webhook-url", receiver.url]
        let (t1, port1) = try await ClusterNodeDeathTests.node("t1", database: database, ledger: ledger)
        let (t2, port2) = try await ClusterNodeDeathTests.node("t2", database: database, ledger: ledger)
        let nodeDeath = ClusterCallNodeDeathTests()
        // The caller calls from t1, which records the call; its client knows t2 too.
        let caller = try await nodeDeath.endpoint(7401, nodes: [port1, port2])
        let callee = try await nodeDeath.endpoint(7402, nodes: [port2])
        let states = caller.signal.stateUpdates()
        let observer = try await ClusterNodeDeathTests.loggedIn("7499", port: port1)
        try await ClusterEndToEndTests.waitOnline("7402", seenBy: observer)
        // And the callee's node sees the caller, or the accept it relays can be refused `peer_offline` (the race
        // ClusterCallLedgerTests met in CI).
        try await ClusterEndToEndTests.waitOnline(
            "7401", seenBy: try await ClusterNodeDeathTests.loggedIn("7498", port: port2))

        try await caller.api.call(remoteUserId: callee.user, callType: .video)
        try await callee.reaches(.calling)
        try await callee.api.accept(remoteUserId: caller.user)
        try await caller.reaches(.connected)
        try await callee.reaches(.connected)
        // t1 shares the accepted call at its next presence read (once a second).
        let callId = try await withTimeout(10, "t1 to share the accepted call") {
            while true {
                if let call = try await Self.liveCalls(database: database).first, call.node == "t1", call.accepted {
                    return call.callId
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        }

        t1.kill()
        // t2's sweep finds t1 dead and takes the call over; the caller's client logs in to t2 by itself.
        try await withTimeout(10, "t2 to take the call over") {
            while try await Self.liveCalls(database: database).map(\.node) != ["t2"] {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        #expect(try await ClusterCallNodeDeathTests.loggedInAgain(states, "the caller's client logged in to t2"))

        try await caller.api.hangup(remoteUserId: callee.user, reason: "after the crash")
        let callerEnd = try await caller.nextChange()
        let calleeEnd = try await callee.nextChange()
        #expect(callerEnd.state == .prepared && callerEnd.reason == .localHangup)
        #expect(calleeEnd.state == .prepared && calleeEnd.reason == .remoteHangup)

        // One record, with the call's real end, written by t2. (Read on a connection of the test's own: a store's
        // pool needs a task of its own to start, which the test process, busy with earlier suites, may start late.)
        let records = try await withTimeout(20, "t2 to record the call") {
            while true {
                let records = try await Self.records(of: "7401", database: database)
                if !records.isEmpty { return records }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        #expect(records.count == 1)
        let record = records[0]
        #expect(record.callId == callId)
        #expect(record.outcome == "completed")
        #expect(record.endedBy == "7401" && record.endReason == "after the crash")
        #expect(record.acceptedAt != nil && record.durationMillis > 0)
        // t2 deletes the row of the call at its next presence read.
        try await withTimeout(10, "t2 to delete the row of the ended call") {
            while try await !Self.liveCalls(database: database).isEmpty {
                try await Task.sleep(for: .milliseconds(100))
            }
        }

        await caller.api.deinitialize()
        await callee.api.deinitialize()
        t2.interrupt()
        #expect(try await t2.finish() == 0)
        await receiver.stop()
    }
}
