import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// How a node's call ledger names the sender of a message that came from another node.
@Suite struct RemoteSenderTests {
    @Test func aStandInIsTheSameOnEveryNodeAndApartFromLocalSessions() {
        let standIn = SessionID.remote(node: "b", user: "1001")
        #expect(standIn == .remote(node: "b", user: "1001"))
        #expect(standIn.isRemote && !SessionID(1).isRemote && !SessionID(UInt64(Int64.max)).isRemote)
        #expect(standIn != .remote(node: "c", user: "1001"))
        #expect(standIn != .remote(node: "b", user: "1002"))
        // The separator keeps the node and the user apart.
        #expect(SessionID.remote(node: "b1", user: "2") != .remote(node: "b", user: "12"))
    }

    @Test func theSenderNodeIsReadFromTheMessageId() {
        func envelope(_ messageId: String) -> ClusterEnvelope {
            ClusterEnvelope(node: "a", userId: "2", from: "1", body: MessageBody("x"), sentAt: 0, messageId: messageId)
        }
        #expect(envelope("m-b-4").senderNode == "b")
        #expect(envelope("m-node_12-40000").senderNode == "node_12")
        #expect(envelope("m-4").senderNode == nil)  // a single node's id names no node
        #expect(envelope("m--4").senderNode == nil)
        #expect(envelope("x-b-4").senderNode == nil)
    }
}
