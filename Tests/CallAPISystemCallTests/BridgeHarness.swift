import CallAPI
import CallAPISystemCall
import CallAPISystemCallTesting
import CallAPITesting

/// Two real CallAPI endpoints on an in-memory network and a simulated media plane, one manual clock, and a
/// bridge with a simulated system call screen on each: user 1 ("Ada") calls, user 2 is called.
final class BridgeHarness: Sendable {
    struct Endpoint: Sendable {
        let userId: UInt
        let api: CallApiImpl
        let engine: SimulatedRTCEngine
        let screen: SimulatedSystemCallScreen
        let bridge: SystemCallBridge
        let logs: Logs
    }

    final class Logs: Sendable {
        private let lines = Locked<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    static let ringTimeoutMillis: Int64 = 15_000
    static let callerName = "Ada"

    let clock = ManualClock()
    let network: InMemorySignalNetwork
    let world: SimulatedRTCWorld
    let caller: Endpoint
    let callee: Endpoint

    init(configuration: SystemCallBridgeConfiguration = .init()) {
        let (clock, network, world) = (clock, InMemorySignalNetwork(clock: clock), SimulatedRTCWorld(clock: clock))
        self.network = network
        self.world = world
        func endpoint(_ userId: UInt, name: String) -> Endpoint {
            let api = CallApiImpl()
            let engine = world.engine(userId: userId)
            let screen = SimulatedSystemCallScreen()
            let logs = Logs()
            let bridge = SystemCallBridge(
                callAPI: api, engine: engine, screen: screen, clock: clock, configuration: configuration,
                log: { logs.append($0) })
            screen.attach(bridge)
            api.initialize(
                config: CallConfig(
                    appId: "test", userId: userId, rtcEngine: engine, signalClient: network.client(userId: userId),
                    clock: clock))
            api.prepareForCall(
                prepareConfig: PrepareConfig(
                    rtcToken: "token", callTimeoutMillisecond: UInt64(Self.ringTimeoutMillis),
                    userExtension: [SystemCallPush.callerNameExtensionKey: name]),
                completion: nil)
            return Endpoint(userId: userId, api: api, engine: engine, screen: screen, bridge: bridge, logs: logs)
        }
        caller = endpoint(1, name: Self.callerName)
        callee = endpoint(2, name: "Grace")
    }

    /// User 1 calls user 2; the call message is held as a server holds it for a user whose app is not running.
    func callWhileCalleeIsAsleep(video: Bool = true) -> SystemCallPush {
        network.inject(.hold, from: 1, to: 2)
        caller.api.call(remoteUserId: 2, callType: video ? .video : .audio, callExtension: [:], completion: nil)
        return push()
    }

    /// The push the server sends for user 1's current call.
    func push(video: Bool = true, ringingFor millis: Int64 = ringTimeoutMillis) -> SystemCallPush {
        SystemCallPush(
            callId: caller.api.getCallId(), callerId: 1, callerName: Self.callerName, video: video,
            ringDeadlineMillis: clock.nowMillis() + millis)
    }

    /// The callee's app woke and logged in: the held call message reaches it.
    func calleeLogsIn() { network.releaseHeld() }
}
