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

    func clusterEndpoint(_ user: UInt, on nodes: [TestServer]) async throws -> ServerEndpoint {
        var logger = Logger(label: "test.signal")
        logger.logLevel = .critical
        let signal = SignalClient(configuration: .init(urls: nodes.map(\.baseURL)), logger: logger)
        try await signal.login(
            token: try await nodes[0].server.authority.issue(userId: String(user), ttlSeconds: 600).token)
        let engine = WebRTCEngine(
            transport: ServerChannelTransport(urls: nodes.map(\.baseURL)), label: "cluster-user-\(user)")
        let listener = RecordingCallListener()
        let api = CallApiImpl()
        api.addListener(listener: listener)
        api.initialize(config: CallConfig(userId: user, rtcEngine: engine, signalClient: signal))
        let states = api.stateChanges
        try await api.prepareForCall(
            prepareConfig: PrepareConfig(
                localView: TestCanvas(), remoteView: TestCanvas(), callTimeoutMillisecond: 30_000,
                rtcTokenProvider: nodes[0].tokenProvider))
        return ServerEndpoint(user: user, api: api, signal: signal, engine: engine, listener: listener, states: states)
    }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, "CALLAPI_TEST_POSTGRES_URL is not set"))
    func aCallsMediaGoesOnWhileTheNodeHoldingItsChannelStopsAndItsEnginesJoinAgainOnTheOther() async throws {
        let nodes = try await clusterNodes()
        let caller = try await clusterEndpoint(1001, on: nodes)
        let callee = try await clusterEndpoint(1002, on: nodes)
        let callerEvents = EventRecorder(caller.engine)
        let calleeEvents = EventRecorder(callee.engine)
        _ = try await connect(caller, callee, type: .video)
        let room = "1001-\(caller.api.getCallId())"
        #expect(await nodes[0].server.channelMembers(room) == [1001, 1002])
        let statesBefore = (caller.listener.states.count, callee.listener.states.count)

        // The channel's node drains and stops; its members are told `serverShutdown` and its claims are freed.
        let stoppedAt = ContinuousClock.now
        try await nodes[0].stop()
        try await within(20, "both engines in the channel on the other node") {
            while await nodes[1].server.channelMembers(room) != [1001, 1002] {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let rejoined = ContinuousClock.now - stoppedAt
        // Video still arrives on both sides: a quality period after the rejoin with video in it.
        let count = (callerEvents.events.count, calleeEvents.events.count)
        for (events, skip) in [(callerEvents, count.0), (calleeEvents, count.1)] {
            _ = try await events.wait("video after the rejoin", from: skip) { event in
                if case .remoteQuality(_, _, let quality) = event, quality.videoKbps > 0 { true } else { false }
            }
        }
        for events in [callerEvents, calleeEvents] {
            #expect(!events.events.contains { if case .error = $0 { true } else { false } }, "\(events.events)")
        }
        // Neither side's call changed state.
        #expect(caller.listener.states.count == statesBefore.0, "\(caller.listener.states)")
        #expect(callee.listener.states.count == statesBefore.1, "\(callee.listener.states)")
        #expect(caller.api.state == .connected && callee.api.state == .connected)
        print("channel rejoined on the other node \(rejoined) after the stop")

        try await caller.api.hangup(remoteUserId: callee.user)
        try await within(20, "the callee hearing the hangup") {
            for await change in callee.states where change.state == .prepared { return }
        }
        await caller.close()
        await callee.close()
        try await nodes[1].stop()
    }
}
