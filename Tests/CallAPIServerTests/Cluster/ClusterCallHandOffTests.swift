import CallAPIServerTesting
import CallAPISignalProtocol
import Foundation
import Testing

@testable import CallAPIServer

/// A call recorded on node a whose caller's connection drops and comes back through node c, while a lives and the
/// callee stays on node b (three nodes on the real PostgreSQL, the ledger on it too): a hears neither side any more,
/// so it hands the call off, a node with one of its users takes it over, and the record ends by the callee's hangup
/// rather than as `dropped` (docs/scale-out.md, "The ledger across nodes").
@Suite(.serialized, .enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct ClusterCallHandOffTests {
    /// A CallAPI message (wire format 1.0) as the ledger reads it.
    static func message(_ action: Int, callId: String, from user: Int) -> String {
        "{\"message_action\":\(action),\"message_version\":\"1.0\",\"message_timestamp\":1,\"fromUserId\":\(user),"
            + "\"callId\":\"\(callId)\",\"fromRoomId\":\"room-\(callId)\"}"
    }

    static func send(_ socket: RawSocket, id: Int, to user: String, _ body: String) async throws {
        socket.send(.send(.init(id: id, to: user, body: body)))
        let answer = try await ClusterEndToEndTests.frame(on: socket, "the answer to \(id)") {
            if case .answer(let answer) = $0, answer.id == id { true } else { false }
        }
        guard case .answer(let result) = answer, result.result == .delivered else {
            throw UnexpectedFrame(frame: answer)
        }
    }

    @Test func aCallWhoseCallerReconnectsThroughAnotherNodeIsHandedOffAndEndsByItsHangup() async throws {
        let (_, nodes) = try await ClusterEndToEndTests.nodes(["a", "b", "c"]) { url, configuration in
            configuration.ledger.database = .postgres(url: url)
        }
        let callId = "handoff-\(UUID().uuidString)"
        let caller = try await nodes[0].loggedIn("2001")
        let callee = try await nodes[1].loggedIn("2002")
        try await ClusterEndToEndTests.waitOnline("2002", seenBy: caller)
        try await ClusterEndToEndTests.waitOnline("2001", seenBy: callee)

        try await Self.send(caller, id: 1, to: "2002", Self.message(0, callId: callId, from: 2001))
        try await Self.send(callee, id: 1, to: "2001", Self.message(2, callId: callId, from: 2002))
        try await withTimeout(10, "node a to record the accept") {
            while nodes[0].server.ledger?.busyCall(of: "2002") != callId {
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        // The caller's connection drops; it comes back through node c.
        caller.close()
        let again = try await nodes[2].loggedIn("2001")
        try await ClusterEndToEndTests.waitOnline("2002", seenBy: again)
        try await ClusterEndToEndTests.waitOnline("2001", seenBy: callee)
        let taken = try await withTimeout(15, "node b or c to take the call over") {
            while true {
                for node in nodes.dropFirst()
                where node.server.ledger?.liveCallSnapshots.contains(where: { $0.callId == callId }) == true {
                    return node
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        #expect(nodes[0].server.ledger?.liveCallSnapshots.contains { $0.callId == callId } == false)

        // The callee hangs up: the node that took the call over hears it and writes the record.
        try await Self.send(callee, id: 2, to: "2001", Self.message(4, callId: callId, from: 2002))
        let record = try await withTimeout(10, "the call's record") {
            while true {
                let calls = try await taken.server.calls(CallQuery(userId: "2002", limit: 10)).calls
                if let call = calls.first(where: { $0.callId == callId }) { return call }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        #expect(record.outcome == .completed && record.endedBy == "2002")
        #expect(record.caller == "2001" && record.acceptedAt != nil)
        // Recorded once, across the cluster.
        let all = try await nodes[0].server.calls(CallQuery(userId: "2001", limit: 10)).calls
        #expect(all.filter { $0.callId == callId }.count == 1)
        for node in nodes { try await node.stop() }
    }
}
