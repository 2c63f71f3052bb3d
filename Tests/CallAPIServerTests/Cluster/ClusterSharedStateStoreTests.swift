import CallAPISignalProtocol
import Logging
import PostgresNIO
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The cluster's shared calls in progress and tombstones in a real PostgreSQL: what one node writes, another reads;
/// a dead node's calls are taken over by exactly one survivor, and a node that lost its epoch cannot write over them.
@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct ClusterSharedStateStoreTests {
    /// Runs `body` with stores for `nodes` on a new database, each node registered.
    func withStores(
        _ nodes: [String],
        _ body: ([String: (store: ClusterStore, epoch: Int64)], PostgresConnection) async throws -> Void
    ) async throws {
        let url = try await LedgerBackend.freshPostgresURL()
        let logger = Logger(label: "test.cluster")
        let connection = try PostgresLedgerStore.configuration(url: url)
        let client = PostgresClient(
            configuration: .init(
                host: connection.host ?? "127.0.0.1", port: connection.port ?? 5432, username: connection.username,
                password: connection.password, database: connection.database, tls: .disable),
            backgroundLogger: logger)
        let run = Task { await client.run() }
        let direct = try await PostgresConnection.connect(configuration: connection, id: 1, logger: logger)
        do {
            try await ClusterStore.migrate(direct, logger: logger)
            var stores: [String: (ClusterStore, Int64)] = [:]
            for node in nodes {
                let store = ClusterStore(client: client, nodeId: node, logger: logger)
                stores[node] = (store, try await store.register())
            }
            try await body(stores, direct)
        } catch {
            try? await direct.close()
            run.cancel()
            throw error
        }
        try await direct.close()
        run.cancel()
    }

    static func snapshot(
        _ callId: String, acceptedAt: Int64? = nil, caller: String = "1", callee: String = "2"
    ) -> LiveCallSnapshot {
        LiveCallSnapshot(
            callId: callId, caller: caller, callee: callee, media: .video, roomId: "r", startedAt: 1_000, rangAt: 1_100,
            acceptedAt: acceptedAt, devices: [CallDevice(userId: "1", session: "s-1", deviceId: nil, ending: "called")],
            lastHeard: 1_100)
    }

    @Test func aDeadNodesCallsAreTakenOverByExactlyOneSurvivorAndItsOldEpochCannotWriteOverThem() async throws {
        try await withStores(["a", "b", "c"]) { nodes, direct in
            let (a, epochA) = nodes["a"]!
            let (b, epochB) = nodes["b"]!
            let (c, epochC) = nodes["c"]!
            try await a.publishCalls(
                changed: [Self.snapshot("c1"), Self.snapshot("c2", acceptedAt: 1_500)], ended: [], epoch: epochA)
            // a is a member: nothing to take.
            #expect(try await b.claimCalls(epoch: epochB, users: [], graceMillis: 60_000).adopted.isEmpty)

            // a's row vanishes without a sweep marking its calls: b and c claim at the same time, and each call goes
            // to one of them, once.
            _ = try await direct.query("DELETE FROM callapi_cluster_nodes WHERE node_id = 'a'", logger: direct.logger)
            async let fromB = b.claimCalls(epoch: epochB, users: [], graceMillis: 60_000)
            async let fromC = c.claimCalls(epoch: epochC, users: [], graceMillis: 60_000)
            let claimed = try await [fromB, fromC]
            let adopted = claimed.flatMap(\.adopted)
            #expect(adopted.allSatisfy { $0.node == "a" })
            #expect(adopted.flatMap(\.calls).map(\.callId).sorted() == ["c1", "c2"])
            #expect(adopted.flatMap(\.calls).first { $0.callId == "c2" }?.acceptedAt == 1_500)
            #expect(try await b.claimCalls(epoch: epochB, users: [], graceMillis: 60_000).adopted.isEmpty)
            #expect(try await c.claimCalls(epoch: epochC, users: [], graceMillis: 60_000).adopted.isEmpty)

            // a resumes with its old epoch: its writes change nothing, and delete nothing.
            var stale = Self.snapshot("c1")
            stale.acceptedAt = 9_999
            try await a.publishCalls(changed: [stale], ended: ["c2"], epoch: epochA)
            let rows = try await direct.query(
                "SELECT call_id, node_id, snapshot FROM callapi_cluster_calls ORDER BY call_id", logger: direct.logger)
            var found: [(String, String, String)] = []
            for try await row in rows.decode((String, String, String).self) { found.append(row) }
            #expect(found.map(\.0) == ["c1", "c2"])
            #expect(found.allSatisfy { $0.1 == "b" || $0.1 == "c" })
            #expect(!found.contains { $0.2.contains("9999") })
        }
    }

    @Test func aCallOrphanedByASweepGoesFirstToTheNodeOneOfItsUsersIsOnAndToAnyNodeAfterTheGrace() async throws {
        try await withStores(["a", "b", "c"]) { nodes, direct in
            let (a, epochA) = nodes["a"]!
            let (b, epochB) = nodes["b"]!
            let (c, epochC) = nodes["c"]!
            try await a.publishCalls(
                changed: [
                    Self.snapshot("c1", caller: "1", callee: "2"), Self.snapshot("c2", caller: "3", callee: "4"),
                ],
                ended: [], epoch: epochA)
            _ = try await direct.query(
                "UPDATE callapi_cluster_nodes SET heartbeat_at = now() - interval '1 hour' WHERE node_id = 'a'",
                logger: direct.logger)
            #expect(try await b.sweep(deadAfterMillis: 60_000) == ["a"])
            // Within the grace: c, with none of their users, takes nothing; b, where user 2 is, takes c1.
            #expect(try await c.claimCalls(epoch: epochC, users: ["9"], graceMillis: 60_000).adopted.isEmpty)
            let toB = try await b.claimCalls(epoch: epochB, users: ["2"], graceMillis: 60_000).adopted
            #expect(toB.flatMap(\.calls).map(\.callId) == ["c1"])
            // After the grace, any node takes the rest.
            let toC = try await c.claimCalls(epoch: epochC, users: [], graceMillis: 0).adopted
            #expect(toC.flatMap(\.calls).map(\.callId) == ["c2"])
        }
    }

    @Test func aNodeDeletesTheRowsOfItsCallsThatEndedAndOnlyThose() async throws {
        try await withStores(["a", "b"]) { nodes, direct in
            let (a, epochA) = nodes["a"]!
            let (b, epochB) = nodes["b"]!
            try await a.publishCalls(changed: [Self.snapshot("c1")], ended: [], epoch: epochA)
            try await b.publishCalls(changed: [Self.snapshot("c9")], ended: [], epoch: epochB)
            try await a.publishCalls(changed: [], ended: ["c1", "c9"], epoch: epochA)
            let rows = try await direct.query(
                "SELECT call_id FROM callapi_cluster_calls ORDER BY call_id", logger: direct.logger)
            var ids: [String] = []
            for try await id in rows.decode(String.self) { ids.append(id) }
            #expect(ids == ["c9"])
        }
    }

    @Test func aTombstoneWrittenByOneNodeIsReadByTheOthersUntilItExpires() async throws {
        try await withStores(["a", "b"]) { nodes, _ in
            let (a, _) = nodes["a"]!
            let (b, _) = nodes["b"]!
            let entry = UserTombstone(
                userId: "1002", tombstone: Tombstone(callId: "call-1", reason: .cancelled, at: 2_000, expiresAt: 9_000))
            try await a.saveTombstone(entry)
            #expect(try await b.tombstones(now: 3_000).tombstones == [entry])
            #expect(try await a.tombstones(now: 3_000).tombstones.isEmpty)
            #expect(try await b.tombstones(now: 9_000).tombstones.isEmpty)
            // Written again (the same call withdrawn again): one row, the newer.
            var again = entry
            again.tombstone.reason = .expired
            try await a.saveTombstone(again)
            #expect(try await b.tombstones(now: 3_000).tombstones == [again])
        }
    }
}
