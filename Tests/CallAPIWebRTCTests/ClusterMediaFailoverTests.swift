import CallAPI
import CallAPIServer
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import CallAPITesting
import Foundation
import Logging
import Testing

@testable import CallAPIWebRTC

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// A call with real media across a cluster whose node holding the call's RTC channel stops mid-call (a drain for an
// upgrade): media flows peer to peer meanwhile, the engines join the channel again on the other node, and the call
// goes on. Part of the serialized engine suite; needs the PostgreSQL `.ci/run` starts.
extension WebRTCEngineTests {
    /// Two nodes on a new database; each client knows both, the node to stop first.
    func clusterNodes() async throws -> [TestServer] {
        let url = try await TestDatabase.freshPostgresURL()
        var nodes: [TestServer] = []
        for id in ["m1", "m2"] {
            nodes.append(
                try await TestServer.start(port: 0) { configuration in
                    configuration.drainSeconds = 1
                    var cluster = ClusterSettings(nodeId: id, databaseURL: url)
                    cluster.heartbeatMillis = 200
                    cluster.deadAfterMillis = 1_000
                    cluster.presenceMillis = 200
                    configuration.cluster = cluster
                })
        }
        let started = nodes
        try await within(10, "both nodes to be members") {
            while started.contains(where: { $0.server.clusterLink?.epoch == nil }) {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        return nodes
    }

    /// A CallAPI user with real media whose signaling client and channel transport know the nodes at `urls`, the
    /// first first.
    func clusterEndpoint(_ user: UInt, urls: [String], authority: TokenAuthority) async throws -> ServerEndpoint {
        var logger = Logger(label: "test.signal")
        logger.logLevel = .critical
        var configuration = SignalClientConfiguration(urls: urls)
        configuration.backoffBaseMillis = 100
        let signal = SignalClient(configuration: configuration, logger: logger)
        try await signal.login(token: try await authority.issue(userId: String(user), ttlSeconds: 600).token)
        let engine = WebRTCEngine(transport: ServerChannelTransport(urls: urls), label: "cluster-user-\(user)")
        let listener = RecordingCallListener()
        let api = CallApiImpl()
        api.addListener(listener: listener)
        api.initialize(config: CallConfig(userId: user, rtcEngine: engine, signalClient: signal))
        let states = api.stateChanges
        try await api.prepareForCall(
            prepareConfig: PrepareConfig(
                localView: TestCanvas(), remoteView: TestCanvas(), callTimeoutMillisecond: 30_000,
                rtcTokenProvider: { channel, uid in
                    try await authority.issue(userId: String(uid), ttlSeconds: 600, channel: channel).token
                }))
        return ServerEndpoint(user: user, api: api, signal: signal, engine: engine, listener: listener, states: states)
    }

    /// The caller hangs up; once the callee has heard it, both close.
    func hangUpAndClose(_ caller: ServerEndpoint, _ callee: ServerEndpoint) async throws {
        try await caller.api.hangup(remoteUserId: callee.user)
        try await within(20, "the callee hearing the hangup") {
            for await change in callee.states where change.state == .prepared { return }
        }
        await caller.close()
        await callee.close()
    }

    /// After the channel's node went away: waits until `members` shows both users on a surviving node, checks that
    /// video still arrives on both sides after that, that neither engine reported an error and that neither call
    /// changed state; returns how long after `since` the members were together again.
    func mediaWentOn(
        _ caller: ServerEndpoint, _ callee: ServerEndpoint, events: (EventRecorder, EventRecorder),
        statesBefore: (Int, Int), since: ContinuousClock.Instant, members: @escaping @Sendable () async -> [UInt]
    ) async throws -> Duration {
        // Longer than the engines' own 20 s of rejoining: a rejoin that took most of it still counts, and one that
        // gave up shows as the engine's error below rather than as this wait running out.
        try await within(30, "both engines in the channel on a surviving node") {
            while await members() != [1001, 1002] { try await Task.sleep(for: .milliseconds(50)) }
        }
        let together = ContinuousClock.now - since
        let count = (events.0.events.count, events.1.events.count)
        for (recorder, skip) in [(events.0, count.0), (events.1, count.1)] {
            _ = try await recorder.wait("video after the rejoin", from: skip) { event in
                if case .remoteQuality(_, _, let quality) = event, quality.videoKbps > 0 { true } else { false }
            }
        }
        for recorder in [events.0, events.1] {
            #expect(!recorder.events.contains { if case .error = $0 { true } else { false } }, "\(recorder.events)")
        }
        #expect(caller.listener.states.count == statesBefore.0, "\(caller.listener.states)")
        #expect(callee.listener.states.count == statesBefore.1, "\(callee.listener.states)")
        #expect(caller.api.state == .connected && callee.api.state == .connected)
        return together
    }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, "CALLAPI_TEST_POSTGRES_URL is not set"))
    func aCallsMediaGoesOnWhileTheNodeHoldingItsChannelStopsAndItsEnginesJoinAgainOnTheOther() async throws {
        let nodes = try await clusterNodes()
        let authority = nodes[0].server.authority
        let caller = try await clusterEndpoint(1001, urls: nodes.map(\.baseURL), authority: authority)
        let callee = try await clusterEndpoint(1002, urls: nodes.map(\.baseURL), authority: authority)
        let events = (EventRecorder(caller.engine), EventRecorder(callee.engine))
        _ = try await connect(caller, callee, type: .video)
        let room = "1001-\(caller.api.getCallId())"
        #expect(await nodes[0].server.channelMembers(room) == [1001, 1002])
        let statesBefore = (caller.listener.states.count, callee.listener.states.count)

        // The channel's node drains and stops; its members are told `serverShutdown` and its claims are freed.
        let stoppedAt = ContinuousClock.now
        try await nodes[0].stop()
        let survivor = nodes[1]
        let together = try await mediaWentOn(
            caller, callee, events: events, statesBefore: statesBefore, since: stoppedAt,
            members: { await survivor.server.channelMembers(room) })
        print("drained node: the channel's members met again on the other node \(together) after the stop")

        try await hangUpAndClose(caller, callee)
        try await nodes[1].stop()
    }
}

extension WebRTCEngineTests {
    @Test(
        .disabled(
            """
            flaky (1 in 3 CI runs, 1 in about 8 local runs): after the SIGKILL both engines stop trying to join again \
            about 2 s in, when the survivor finds the dead node, and neither is in the channel 30 s later; the drain \
            test covers the rejoin meanwhile. Open defect, docs/scale-out.md ("Media across a node's death").
            """),
        .enabled(if: TestDatabase.postgresURL != nil, "CALLAPI_TEST_POSTGRES_URL is not set"),
        .enabled(if: ServeProcess.executable != nil, "the callapi executable is not built"))
    func aCallsMediaGoesOnWhenTheNodeHoldingItsChannelIsKilledAndItsEnginesJoinAgainOnTheSurvivor() async throws {
        let database = try await TestDatabase.freshPostgresURL()
        var nodes: [ServeProcess] = []
        for id in ["k1", "k2"] {
            nodes.append(
                try await ServeProcess.start([
                    "--node-id", id, "--cluster-database", database, "--cluster-url", "ws://127.0.0.1:{port}",
                    "--secret", TestServer.signingSecret, "--admin-key", TestServer.defaultAdminKey,
                    "--cluster-heartbeat-ms", "200",
                    "--cluster-dead-after-ms", "1000", "--ledger", "0", "--drain", "1",
                ]))
        }
        let authority = try await TokenAuthority.make(key: .hs256(secret: TestServer.signingSecret))
        let urls = nodes.map(\.baseURL)
        let caller = try await clusterEndpoint(1001, urls: urls, authority: authority)
        let callee = try await clusterEndpoint(1002, urls: urls, authority: authority)
        let events = (EventRecorder(caller.engine), EventRecorder(callee.engine))
        _ = try await connect(caller, callee, type: .video)
        let room = "1001-\(caller.api.getCallId())"
        let statesBefore = (caller.listener.states.count, callee.listener.states.count)

        // SIGKILL: the channel's sockets drop, and its claim stays with the dead node until the survivor finds it dead.
        let killedAt = ContinuousClock.now
        nodes[0].kill()
        let survivor = nodes[1].port
        let together = try await mediaWentOn(
            caller, callee, events: events, statesBefore: statesBefore, since: killedAt,
            members: { await Self.channelMembers(room, port: survivor) })
        print("killed node: the channel's members met again on the survivor \(together) after the kill")

        try await hangUpAndClose(caller, callee)
        nodes[1].stop()
    }

    /// The uids in `channel` on the `callapi serve` at `port`, from its operator endpoint.
    static func channelMembers(_ channel: String, port: Int) async -> [UInt] {
        guard let url = URL(string: "http://127.0.0.1:\(port)/v1/channels/\(channel)") else { return [] }
        var request = URLRequest(url: url)
        request.setValue("Bearer \(TestServer.defaultAdminKey)", forHTTPHeaderField: "Authorization")
        guard let (data, _) = try? await URLSession.shared.data(for: request),
            let body = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let members = body["members"] as? [Int]
        else { return [] }
        return members.map { UInt($0) }.sorted()
    }
}
