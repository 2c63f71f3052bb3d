import CallAPIServer
import CallAPIServerTesting
import CallAPISignalProtocol
import Foundation
import Testing

/// A cluster whose PostgreSQL is stopped and started again mid-session (a real restart of a server of its own):
/// while it is down, a send across nodes is refused with a reason; once it is back, the nodes' pools and their
/// LISTEN connections (postgres-nio's, with the link's own reconnect loop) reconnect, and messages cross again.
@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct ClusterDatabaseRestartTests {
    /// Runs a script of scripts/services to its end; returns the line it printed last.
    static func service(_ script: String, _ arguments: [String], port: Int? = nil) async throws -> String {
        let environment = port.map { "env POSTGRES_PORT=\($0) " } ?? ""
        let process = try CLIProcess(
            shell: environment + "scripts/services/\(script) " + arguments.joined(separator: " "))
        let status = try await process.finish(within: 60)
        guard status == 0 else { throw TimedOut(what: "\(script) to succeed (exit status \(status))") }
        guard script == "start-postgres.sh" else { return process.printed.last ?? "" }
        // Its `PORT PID USER` line: the script can exit before its output is read, and the server it starts keeps
        // running, so the line is waited for rather than taken from what was read by the exit.
        return try await process.expectLine(within: 10) { line in
            let fields = line.split(separator: " ")
            return fields.count == 3 && Int(fields[0]) != nil && Int(fields[1]) != nil
        }
    }

    /// Runs `body` with a PostgreSQL of its own in a fresh folder (its URL, port and folder), then stops the nodes
    /// `body` reported and the database and removes the folder, whether `body` succeeded or threw.
    static func withOwnPostgres(
        _ body: (_ url: String, _ port: Int, _ folder: URL, _ started: inout [TestServer]) async throws -> Void
    ) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("callapi-pg-\(UUID())")
        let started = try await Self.service("start-postgres.sh", [folder.path]).split(separator: " ")
        var servers: [TestServer] = []
        do {
            guard started.count >= 3, let port = Int(started[0]) else { throw TimedOut(what: "PostgreSQL's port") }
            let user = started[2].trimmingCharacters(in: .whitespacesAndNewlines)
            try await body("postgres://\(user)@127.0.0.1:\(port)/callapi", port, folder, &servers)
        } catch {
            for server in servers { try? await server.stop() }
            _ = try? await Self.service("stop-postgres.sh", [folder.path])
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        for server in servers { try await server.stop() }
        _ = try await Self.service("stop-postgres.sh", [folder.path])
        try? FileManager.default.removeItem(at: folder)
    }

    @Test func messagesCrossNodesAgainAfterPostgreSQLRestartsAndAreRefusedClearlyMeanwhile() async throws {
        try await Self.withOwnPostgres { url, port, folder, started in
            try await messagesCrossAgain(url: url, port: port, folder: folder, started: &started)
        }
    }

    private func messagesCrossAgain(url: String, port: Int, folder: URL, started: inout [TestServer]) async throws {
        let (_, servers) = try await ClusterEndToEndTests.nodes(["a", "b"], database: url)
        started = servers
        let alice = try await servers[0].loggedIn("8001")
        let bob = try await servers[1].loggedIn("8002")
        try await ClusterEndToEndTests.waitOnline("8002", seenBy: alice)
        alice.send(.send(.init(id: 1, to: "8002", body: "before", ttl: nil)))
        _ = try await ClusterEndToEndTests.frame(on: bob, "the message before the restart") {
            if case .message(let message) = $0, message.body == "before" { true } else { false }
        }

        _ = try await Self.service("stop-postgres.sh", [folder.path])
        alice.send(.send(.init(id: 2, to: "8002", body: "during", ttl: nil)))
        let refused = try await ClusterEndToEndTests.frame(on: alice, within: 20, "the answer while it is down") {
            if case .answer(let answer) = $0, answer.id == 2 { true } else { false }
        }
        guard case .answer(let during) = refused else { throw UnexpectedFrame(frame: refused) }
        #expect(during.result == .failed && during.reason == .serverBusy)
        #expect(during.message?.contains("cannot be reached") == true)

        _ = try await Self.service("start-postgres.sh", [folder.path], port: port)
        // Once both nodes are members again and their listeners have reconnected, a send crosses.
        try await withTimeout(30, "both listeners to reconnect") {
            while await servers.asyncContains(where: { ($0.server.clusterLink?.listens ?? 0) < 2 }) {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        var id = 10
        var delivered = false
        while !delivered {
            id += 1
            alice.send(.send(.init(id: id, to: "8002", body: "after-\(id)", ttl: nil)))
            let frame = try await ClusterEndToEndTests.frame(on: alice, within: 20, "an answer after the restart") {
                if case .answer(let answer) = $0, answer.id == id { true } else { false }
            }
            if case .answer(let answer) = frame, answer.result == .delivered { delivered = true }
            if id > 100 { throw TimedOut(what: "a send delivered after the restart") }
            if !delivered { try await Task.sleep(for: .milliseconds(200)) }
        }
        let expected = "after-\(id)"
        _ = try await ClusterEndToEndTests.frame(on: bob, within: 10, "the message after the restart") {
            if case .message(let message) = $0, message.body == expected { true } else { false }
        }
    }
}

extension Array where Element == TestServer {
    /// `contains(where:)` with an async predicate.
    func asyncContains(where predicate: (TestServer) async -> Bool) async -> Bool {
        for element in self where await predicate(element) { return true }
        return false
    }
}
