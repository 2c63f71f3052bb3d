import CallAPIServerTesting
import CallAPISignalProtocol
import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The ledger's PostgreSQL store across a restart of PostgreSQL: a save while it is down waits for it (or fails
/// and is retried by the ledger's writer), and every save after it comes back succeeds. With one connection, the
/// first statement after the restart never returned, and the ledger recorded nothing more until the server itself
/// was restarted (issue 44, PostgreSQL faults).
@Suite(
    .enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing),
    .enabled(if: CLIProcess.executable != nil, "the callapi executable is not built"))
struct LedgerDatabaseRestartTests {
    @Test func savesSucceedAfterPostgreSQLRestarts() async throws {
        try await ClusterDatabaseRestartTests.withOwnPostgres { url, port, folder, _ in
            let store = try await PostgresLedgerStore.open(url: url, logger: Logger(label: "test.ledger"))
            let before = LedgerStoreScenarios.record("before", caller: "1", callee: "2", startedAt: 1_000)
            try await store.save([before])

            _ = try await ClusterDatabaseRestartTests.service("stop-postgres.sh", [folder.path])
            // Saved while PostgreSQL is down: waits for it, or fails (the writer retries) — never hangs forever.
            let during = LedgerStoreScenarios.record("during", caller: "1", callee: "2", startedAt: 2_000)
            // Polled, not awaited: a save that hangs (as on one connection, whose statements never returned after the
            // restart) must fail the test, not hang it.
            let outcome = NIOLockedValueBox<Bool?>(nil)
            Task {
                do {
                    try await store.save([during])
                    outcome.withLockedValue { $0 = true }
                } catch {
                    outcome.withLockedValue { $0 = false }
                }
            }
            try await Task.sleep(for: .milliseconds(500))
            _ = try await ClusterDatabaseRestartTests.service("start-postgres.sh", [folder.path], port: port)
            let savedDuring = try await withTimeout(30, "the save made while PostgreSQL was down to return") {
                while true {
                    if let saved = outcome.withLockedValue({ $0 }) { return saved }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }

            let after = LedgerStoreScenarios.record("after", caller: "1", callee: "2", startedAt: 3_000)
            try await withTimeout(30, "a save after the restart") {
                while true {
                    do {
                        try await store.save([after])
                        return
                    } catch {
                        try await Task.sleep(for: .milliseconds(200))
                    }
                }
            }
            let ids = try await store.calls(CallQuery(userId: "1")).calls.map(\.callId)
            #expect(ids.contains("before") && ids.contains("after"))
            #expect(ids.contains("during") == savedDuring)
            try await store.close()
        }
    }
}
