import CallAPIServer
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import Logging
import PostgresNIO
import Testing

@testable import CallAPIServer

/// RTC channels across the nodes of a cluster (docs/scale-out.md, "RTC channels across nodes"): the node a channel's
/// first member joins claims it, and a member who reaches another node is sent there, so both members meet on one
/// node with its kick, rejoin bar and watchdog, over real sockets and the real database.
@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct ClusterChannelHomeTests {
    /// Node `a` advertises its address; node `b` advertises none (its clients reach it through a proxy).
    static func nodes() async throws -> (a: TestServer, b: TestServer) {
        try await nodesOn().nodes
    }

    /// ``nodes()`` with the database's URL.
    static func nodesOn() async throws -> (nodes: (a: TestServer, b: TestServer), database: String) {
        let port = try await freeLoopbackPort()
        let url = try await LedgerBackend.freshPostgresURL()
        var servers: [TestServer] = []
        for (id, advertised) in [("a", "ws://127.0.0.1:\(port)"), ("b", nil)] {
            servers.append(
                try await TestServer.start(port: id == "a" ? port : 0, tickIntervalMillis: 100) { configuration in
                    var cluster = ClusterSettings(nodeId: id, databaseURL: url)
                    cluster.heartbeatMillis = 200
                    cluster.deadAfterMillis = 1_000
                    cluster.presenceMillis = 200
                    cluster.advertisedURL = advertised
                    configuration.cluster = cluster
                })
        }
        // A node claims channels once it is a member (before that, it lets members in as a single server would).
        let started = servers
        try await withTimeout(10, "both nodes to be members") {
            while await started.asyncContains(where: { $0.server.clusterLink?.epoch == nil }) {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        return ((servers[0], servers[1]), url)
    }

    @Test func aMemberWhoReachesAnotherNodeIsSentToTheChannelsNodeAndMeetsTheOtherThere() async throws {
        let (a, b) = try await Self.nodes()
        let aliceEvents = ChannelEventRecorder()
        let alice = RTCChannelClient.join(
            url: a.baseURL, channel: "call-x", uid: 1001, token: try await a.rtcToken(1001, channel: "call-x"),
            events: aliceEvents.handler)
        #expect(try await aliceEvents.next() == .joined(members: [], iceServers: []))

        let bobEvents = ChannelEventRecorder()
        let bob = RTCChannelClient.join(
            url: b.baseURL, channel: "call-x", uid: 1002, token: try await b.rtcToken(1002, channel: "call-x"),
            events: bobEvents.handler)
        #expect(try await bobEvents.next() == .joined(members: [ChannelMember(uid: 1001)], iceServers: []))
        #expect(try await aliceEvents.next() == .memberJoined(ChannelMember(uid: 1002)))
        #expect(await a.server.channelMembers("call-x") == [1001, 1002])
        #expect(await b.server.channelMembers("call-x").isEmpty)
        bob.send(data: "offer", to: ChannelMember(uid: 1001))
        #expect(try await aliceEvents.next() == .signal(from: ChannelMember(uid: 1002), data: "offer"))

        // The operator asks the other node: it sends the request to the channel's node (307), whose members are listed.
        let (listed, members) = try await b.admin("GET", "/v1/channels/call-x")
        #expect(listed == 200 && members.contains("\"members\":[1001,1002]"), "\(listed) \(members)")

        // The operator's kick, sent to the other node, is answered with where to send it (307 keeps the method and
        // the body; URLSession here would not resend the body, so the test follows it itself).
        let kick = "{\"uid\":1002,\"barSeconds\":60,\"reason\":\"spam\"}"
        let probe = try TCPProbe(port: b.port)
        try probe.write(
            "POST /v1/channels/call-x/kick HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer \(TestServer.defaultAdminKey)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(kick.utf8.count)\r\n\r\n\(kick)")
        let head = String(
            decoding: await probe.read(seconds: 5) {
                String(decoding: $0, as: UTF8.self).contains("\r\n\r\n")
            }.bytes, as: UTF8.self)
        probe.close()
        #expect(head.hasPrefix("HTTP/1.1 307"), "\(head)")
        #expect(
            head.lowercased().contains("location: http://127.0.0.1:\(a.port)/v1/channels/call-x/kick"), "\(head)")
        let (status, answer) = try await httpRequest(
            "http://127.0.0.1:\(a.port)/v1/channels/call-x/kick", method: "POST",
            headers: ["Authorization": "Bearer \(TestServer.defaultAdminKey)", "Content-Type": "application/json"],
            body: kick)
        #expect(status == 200 && answer.contains("\"kicked\":true"), "\(status) \(answer)")
        guard case .removed(let code, _) = try await bobEvents.next() else {
            Issue.record("bob was not removed")
            return
        }
        #expect(code == ChannelErrorCode.kicked.rawValue)
        let rejoinEvents = ChannelEventRecorder()
        let rejoin = RTCChannelClient.join(
            url: b.baseURL, channel: "call-x", uid: 1002, token: try await b.rtcToken(1002, channel: "call-x"),
            events: rejoinEvents.handler)
        guard case .joinFailed(let refused, _) = try await rejoinEvents.next() else {
            Issue.record("the kicked member joined again through the other node")
            return
        }
        #expect(refused == ChannelErrorCode.tokenRevoked.rawValue || refused == ChannelErrorCode.barred.rawValue)
        rejoin.leave()
        alice.leave()
        bob.leave()
        try await b.stop()
        try await a.stop()
    }

    @Test func aJoinForAChannelOnANodeWithNoAddressIsRefusedNamingTheNodeAndALeftNodesChannelsAreFree() async throws {
        let (a, b) = try await Self.nodes()
        let (carol, _) = try await b.joined(1003, channel: "call-y")
        let refused = RawSocket(url: a.rtcURL)
        let answer = try await refused.join(
            channel: "call-y", uid: 1004, device: nil, token: try await a.rtcToken(1004, channel: "call-y"))
        guard case .joinFailed(let failure) = answer else { throw UnexpectedChannelFrame(frame: answer) }
        #expect(failure.errorCode == .channelElsewhere)
        #expect(failure.location == nil)
        #expect(failure.message.contains("node b"))
        _ = carol
        // The operator's request to the node without the channel is refused naming the node that has it.
        let (status, refusal) = try await a.admin("GET", "/v1/channels/call-y")
        #expect(status == 409 && refusal.contains("node b"), "\(status) \(refusal)")

        // Node b leaves the cluster: its channels are free, and the next member claims call-y where it joins.
        try await b.stop()
        let (dave, joined) = try await a.joined(1004, channel: "call-y")
        #expect(joined.devices.isEmpty)
        _ = dave
        try await a.stop()
    }

    @Test func aNodeThatRegistersAgainClaimsItsChannelsAgain() async throws {
        let ((a, b), database) = try await Self.nodesOn()
        let (alice, _) = try await a.joined(1001, channel: "call-z")
        let before = try #require(a.server.clusterLink?.epoch)
        // As if node a had been stopped past the dead limit: the cluster forgets it, and it registers again.
        let logger = Logger(label: "test.cluster")
        let connection = try await PostgresConnection.connect(
            configuration: try PostgresLedgerStore.configuration(url: database), id: 1, logger: logger)
        // The connection is closed on every path (postgres-nio traps on one dropped open).
        do {
            try await connection.query("DELETE FROM callapi_cluster_nodes WHERE node_id = 'a'", logger: logger)
            try await withTimeout(10, "node a's channel claimed under its new epoch") {
                while true {
                    let epoch = a.server.clusterLink?.epoch ?? before
                    if epoch != before {
                        let rows = try await connection.query(
                            "SELECT epoch FROM callapi_cluster_channels WHERE channel = 'call-z'", logger: logger)
                        var claimed: Int64?
                        for try await value in rows.decode(Int64.self) { claimed = value }
                        if claimed == epoch { return }
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        // A member who reaches node b is sent to node a, where alice is.
        let bob = RawSocket(url: b.rtcURL)
        let answer = try await bob.join(
            channel: "call-z", uid: 1002, device: nil, token: try await b.rtcToken(1002, channel: "call-z"))
        guard case .joinFailed(let failure) = answer else { throw UnexpectedChannelFrame(frame: answer) }
        #expect(failure.errorCode == .channelElsewhere && failure.location == "ws://127.0.0.1:\(a.port)")
        _ = alice
        try await b.stop()
        try await a.stop()
    }
}
