import CallAPI
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import Foundation
import Logging
import PostgresNIO
import Testing

@testable import CallAPIServer

/// The match queue across two nodes of a cluster, over real sockets and the real PostgreSQL (docs/match.md, "In a
/// cluster"): users on different nodes are paired by the single node's rules, and the matched call connects across
/// the nodes with the agent's auto-accept.
@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct ClusterMatchTests {
    let match = MatchEndToEndTests()

    @Test func usersOnTwoNodesArePairedAndTheirMatchedCallConnects() async throws {
        let (_, servers) = try await ClusterEndToEndTests.nodes(["ma", "mb"])
        let observer = try await servers[0].loggedIn("3099")
        let alice = try await match.endpoint(3001, on: servers[0])
        let bob = try await match.endpoint(3002, on: servers[1], autoAccept: true)
        try await ClusterEndToEndTests.waitOnline("3002", seenBy: observer)

        #expect(try await alice.signal.enterMatchQueue(tags: ["paris", "chess"]) == ["paris", "chess"])
        #expect(try await bob.signal.enterMatchQueue(tags: ["rome", "chess"]) == ["rome", "chess"])
        let alicesMatch = try await alice.matched()
        let bobsMatch = try await bob.matched()
        // Alice waited: she places the call, from her node; bob's agent accepts it on his.
        #expect(alicesMatch.role == .caller && alicesMatch.peerId == "3002" && alicesMatch.tag == "chess")
        #expect(bobsMatch.role == .callee && bobsMatch.peerId == "3001" && bobsMatch.tag == "chess")
        #expect(alicesMatch.callId == bobsMatch.callId && alicesMatch.matchId == bobsMatch.matchId)
        try await alice.reaches(.connected, within: 10)
        try await bob.reaches(.connected, within: 10)
        #expect(alice.api.getCallId() == alicesMatch.callId)

        try await alice.api.hangup(remoteUserId: bob.user)
        try await bob.reaches(.prepared, .remoteHangup)
        for endpoint in [alice, bob] { await endpoint.close() }
        observer.close()
        for server in servers { try await server.stop() }
    }

    @Test func aUserWhoLeftOrWentOfflineOnOneNodeIsNotPairedOnTheOther() async throws {
        let (_, servers) = try await ClusterEndToEndTests.nodes(["mc", "md"])
        let carol = try await match.endpoint(3003, on: servers[0])
        let frank = try await match.endpoint(3006, on: servers[0])
        let dave = try await match.endpoint(3004, on: servers[1])
        let erin = try await match.endpoint(3005, on: servers[0])

        try await carol.signal.enterMatchQueue(tags: ["rome"])
        try await carol.signal.leaveMatchQueue()
        try await frank.signal.enterMatchQueue(tags: ["rome"])
        frank.signal.logout()
        // Frank's row goes with his session (the node deletes it once the logout is handled).
        try await withTimeout(10, "frank's entry to be taken out") {
            while try await Self.waiting(in: servers[0]).contains("3006") {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        // Had carol or frank still waited, dave would be paired with one of them now.
        try await dave.signal.enterMatchQueue(tags: ["rome"])
        try await erin.signal.enterMatchQueue(tags: ["rome"])
        let davesMatch = try await dave.matched()
        #expect(davesMatch.peerId == "3005" && davesMatch.role == .caller)
        let erinsMatch = try await erin.matched()
        #expect(erinsMatch.peerId == "3004" && erinsMatch.role == .callee)
        try await dave.reaches(.calling, .localVideoCall, within: 10)
        try await erin.reaches(.calling, .remoteVideoCall, within: 10)
        dave.api.cancelCall(completion: nil)
        try await erin.reaches(.prepared, within: 10)
        for endpoint in [carol, frank, dave, erin] { await endpoint.close() }
        for server in servers { try await server.stop() }
    }

    /// The users in the cluster's match queue now, read from its database on a connection of the test's own.
    static func waiting(in server: TestServer) async throws -> [String] {
        let url = try #require(server.server.configuration.cluster?.databaseURL)
        let logger = Logger(label: "test.cluster")
        let connection = try await PostgresConnection.connect(
            configuration: try PostgresLedgerStore.configuration(url: url), id: 1, logger: logger)
        defer { Task { try? await connection.close() } }
        let rows = try await connection.query("SELECT user_id FROM callapi_cluster_match_queue", logger: logger)
        var users: [String] = []
        for try await user in rows.decode(String.self) { users.append(user) }
        return users
    }
}
