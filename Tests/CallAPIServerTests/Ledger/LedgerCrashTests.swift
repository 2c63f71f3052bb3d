import CallAPISignalProtocol
import Foundation
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// `callapi serve` as a real process, killed or started on a database it must refuse: what is on disk afterwards.
@Suite(.serialized, .enabled(if: CLIProcess.executable != nil, "needs the built callapi executable"))
struct LedgerCrashTests {
    static let secret = "crash-test-secret-0123456789-0123456789"

    /// Starts `callapi serve` on a free port with its files in `directory`; returns it and its port.
    static func serve(in directory: String, webhookURL: String) async throws -> (CLIProcess, Int) {
        let process = try CLIProcess([
            "serve", "--port", "0", "--secret", secret, "--data-dir", directory, "--call-webhook-url", webhookURL,
        ])
        let line = try await process.expect("/v1/signal")
        let port = line.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) }
        return (process, try #require(port, "no port in \(line)"))
    }

    @Test func aKillRightAfterAHangUpLeavesTheLedgerRowAndItsWebhookEventsTogetherOrNeither() async throws {
        let receiver = CallWebhookReceiver()
        try await receiver.start()
        let authority = try await TokenAuthority.make(key: .hs256(secret: Self.secret), clock: SystemServerClock())
        for round in 0..<3 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(uniqueUser())").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let (server, port) = try await Self.serve(in: directory, webhookURL: receiver.url)
            let caller = uniqueUser()
            let callee = uniqueUser()
            let a = RawSocket(url: "ws://127.0.0.1:\(port)/v1/signal")
            try await a.login(try await authority.issue(userId: caller, ttlSeconds: 600).token)
            let b = RawSocket(url: "ws://127.0.0.1:\(port)/v1/signal")
            try await b.login(try await authority.issue(userId: callee, ttlSeconds: 600).token)
            let callId = "crash-\(round)-\(caller)"
            func body(_ action: Int, from user: String) -> String {
                "{\"message_action\":\(action),\"message_version\":\"1.0\",\"message_timestamp\":1,"
                    + "\"fromUserId\":\(user),\"callId\":\"\(callId)\",\"remoteUserId\":\(callee)}"
            }
            for (id, action, socket, from, to) in [
                (11, 0, a, caller, callee), (12, 2, b, callee, caller), (13, 4, a, caller, callee),
            ] {
                socket.send(.send(.init(id: id, to: to, body: body(action, from: from))))
                _ = try await socket.frame { if case .answer(let answer) = $0 { answer.id == id } else { false } }
            }
            // The hang-up was answered: the call ended on the server. Kill it now, as a crash would.
            server.kill()
            a.close()
            b.close()

            let store = try await SQLiteLedgerStore.open(path: directory + "/callapi-ledger.sqlite")
            let rows = try await store.calls(CallQuery(userId: caller)).calls.map(\.callId)
            let events = try await store.webhookEvents(since: 0, limit: 100).filter { $0.callId == callId }
            try await store.close()
            let ended = events.contains { $0.kind == .ended }
            #expect(
                rows.contains(callId) == ended,
                "round \(round): ledger row \(rows.contains(callId)), ended event \(ended)")
        }
        await receiver.stop()
    }

    @Test func aDatabaseFromANewerServerIsRefusedWithTheReasonEveryTime() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("newer-\(uniqueUser())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/callapi-ledger.sqlite"
        let store = try await SQLiteLedgerStore.open(path: path)
        _ = try await store.runner.run("INSERT INTO schema_version (version) VALUES (999)", [])
        try await store.close()
        for _ in 0..<8 {
            let server = try CLIProcess(["serve", "--port", "0", "--data-dir", directory])
            try await server.expect("schema version 999, newer than this server's")
            #expect(try await server.finish() == 1)
        }
    }
}
