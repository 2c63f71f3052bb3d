import CallAPIServerTesting
import CallAPISignalProtocol
import Testing

@testable import CallAPIServer

/// The server's busy answer (`--answer-busy`) in a cluster: a user in an accepted call recorded by one node is
/// answered busy for by another node, which learns of the call from the cluster's busy rows at its next presence read
/// (docs/scale-out.md).
@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct ClusterBusyAnswerTests {
    @Test func aCallToAUserInACallOnAnotherNodeIsAnsweredBusyByTheCallersNode() async throws {
        let (_, servers) = try await ClusterEndToEndTests.nodes(["a", "b"]) { url, configuration in
            configuration.ledger.database = .postgres(url: url)
            configuration.ledger.answersBusy = true
        }
        // Two users in an accepted call, both on node a: node a's ledger records it.
        let first = LedgerCall(server: servers[0], caller: uniqueUser(), callee: uniqueUser())
        let a = try await servers[0].loggedIn(first.caller)
        let b = try await servers[0].loggedIn(first.callee)
        try await first.call(on: a)
        try await first.send(first.body(2, from: first.callee), on: b, to: first.caller)
        let ledgerB = try #require(servers[1].server.ledger)
        try await withTimeout(10, "node b to learn that the callee is in a call") {
            while ledgerB.busyCall(of: first.callee) != first.callId { try await Task.sleep(for: .milliseconds(50)) }
        }

        // A third user, on node b, calls the busy user: node b answers busy for them, and records the call busy.
        let second = LedgerCall(server: servers[1], caller: uniqueUser(), callee: first.callee)
        let c = try await servers[1].loggedIn(second.caller)
        try await ClusterEndToEndTests.waitOnline(first.callee, seenBy: c)
        #expect(try await second.call(on: c).result == .delivered)
        let frame = try await c.frame { if case .message = $0 { true } else { false } }
        guard case .message(let reject) = frame else { throw UnexpectedFrame(frame: frame) }
        #expect(reject.from == first.callee)
        #expect(reject.body.contains("\"rejectByInternal\":1"))
        #expect(reject.body.contains("\"callId\":\"\(second.callId)\""))
        let record = try #require(try await second.record())
        #expect(record.outcome == .busy && record.endReason == "serverBusy")

        // The call between the two busy users is not answered busy for: a message of it crosses as usual.
        #expect(ledgerB.isCall(first.callId, between: first.caller, and: first.callee))

        // Once the call ends on node a, node b stops answering busy for the callee.
        try await first.send(first.body(4, from: first.caller), on: a, to: first.callee)
        try await withTimeout(10, "node b to learn that the call ended") {
            while ledgerB.busyCall(of: first.callee) != nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        for server in servers { try await server.stop() }
    }
}
