import CallAPI
import CallAPITesting

/// Several CallAPI endpoints wired together in one process: an in-memory signaling network, a simulated
/// media plane and one manual clock. With zero latencies everything happens synchronously.
final class CallHarness: Sendable {
    struct Endpoint: Sendable {
        let userId: UInt
        let api: CallApiImpl
        let listener: RecordingCallListener
        let engine: SimulatedRTCEngine
        let localView: TestCanvas
        let remoteView: TestCanvas
        var roomId: String { "room-\(userId)" }
    }

    let clock = ManualClock()
    let network: InMemorySignalNetwork
    let world: SimulatedRTCWorld
    let endpoints: [UInt: Endpoint]

    init(
        users: [UInt] = [1, 2], timing: SimulatedRTCWorld.Timing = .init(), latencyMillis: Int64 = 0,
        prepare: PrepareConfig = PrepareConfig(), canJoinRtcOnCalling: Bool = true,
        reliability: CallReliability = .standard
    ) {
        network = InMemorySignalNetwork(clock: clock, latencyMillis: latencyMillis)
        world = SimulatedRTCWorld(clock: clock, timing: timing)
        var endpoints: [UInt: Endpoint] = [:]
        for user in users {
            let endpoint = Endpoint(
                userId: user, api: CallApiImpl(),
                listener: RecordingCallListener(canJoinRtcOnCalling: canJoinRtcOnCalling),
                engine: world.engine(userId: user), localView: TestCanvas("local-\(user)"),
                remoteView: TestCanvas("remote-\(user)"))
            endpoint.api.addListener(listener: endpoint.listener)
            endpoint.api.initialize(
                config: CallConfig(
                    appId: "test", userId: user, rtcEngine: endpoint.engine, signalClient: network.client(userId: user),
                    clock: clock, reliability: reliability))
            var config = prepare
            config.roomId = endpoint.roomId
            config.rtcToken = "token-\(user)"
            config.localView = endpoint.localView
            config.remoteView = endpoint.remoteView
            endpoint.api.prepareForCall(prepareConfig: config, completion: nil)
            endpoints[user] = endpoint
        }
        self.endpoints = endpoints
        for endpoint in endpoints.values { endpoint.listener.reset() }
    }

    subscript(user: UInt) -> Endpoint { endpoints[user]! }
}

/// Collects a completion's outcome; with synchronous doubles it is there when the call returns.
final class CompletionProbe: Sendable {
    private let results = Locked<[String?]>([])

    var handler: @Sendable ((any Error)?) -> Void {
        { [results] error in results.withLock { $0.append(error.map { "\($0)" }) } }
    }

    /// How many times the completion ran.
    var count: Int { results.withLock { $0.count } }
    /// Whether it ran exactly once, without an error.
    var succeeded: Bool { results.withLock { $0.count == 1 && $0[0] == nil } }
    /// The error text, when it ran once with an error.
    var errorMessage: String? { results.withLock { $0.count == 1 ? $0[0] : nil } }
}

extension CallApiImpl {
    /// Runs a completion-based request and returns its probe.
    func probe(_ request: (CallApiImpl, @escaping @Sendable ((any Error)?) -> Void) -> Void) -> CompletionProbe {
        let probe = CompletionProbe()
        request(self, probe.handler)
        return probe
    }
}
