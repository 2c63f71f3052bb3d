import CallAPI
import CallAPITesting

/// Two (or three) users in one process, over the in-memory signaling network and the simulated media
/// plane, acting out one ``DemoScenario``.
struct DemoRun: Sendable {
    static let caller: UInt = 1001
    static let callee: UInt = 1002
    static let intruder: UInt = 1003
    /// Watches the callee's showroom in the showroom scenario.
    static let viewer: UInt = 1004
    static let showroomChannel = "showroom-\(callee)"

    struct Outcome: Sendable {
        var timelines: [UInt: [TimelineListener.Line]]
        var finalStates: [UInt: (CallStateType, CallStateReason)]
        var costMaps: [UInt: [String: Int]]
        var failure: String?
    }

    var scenario: DemoScenario
    var clock: any CallClock
    var pacer: any DemoPacer
    var networkLatencyMillis: Int64 = 25
    var timing = SimulatedRTCWorld.Timing(joinLatencyMillis: 60, firstFrameLatencyMillis: 90, frameRate: 15)
    var ringMillis: Int64 = 400
    var holdMillis: Int64 = 1_000
    var ringTimeoutMillis: UInt64 = 2_000
    /// Makes each user's media engine; `nil`: the simulated media plane with ``timing``.
    var makeEngine: (@Sendable (UInt) -> any CallRTCEngine)?

    func run() async -> Outcome {
        let start = clock.nowMillis()
        let network = InMemorySignalNetwork(clock: clock, latencyMillis: networkLatencyMillis)
        let world = SimulatedRTCWorld(clock: clock, timing: timing)
        let users = scenario == .busy ? [Self.caller, Self.callee, Self.intruder] : [Self.caller, Self.callee]
        var apis: [UInt: CallApiImpl] = [:]
        var timelines: [UInt: TimelineListener] = [:]
        var engines: [UInt: any CallRTCEngine] = [:]
        for user in users {
            let api = CallApiImpl()
            let timeline = TimelineListener(userId: user, clock: clock, start: start)
            api.addListener(listener: timeline)
            let engine = makeEngine?(user) ?? world.engine(userId: user)
            engines[user] = engine
            api.initialize(
                config: CallConfig(
                    appId: "demo", userId: user, rtcEngine: engine, signalClient: network.client(userId: user),
                    clock: clock))
            let prepare = PrepareConfig(
                rtcToken: "demo-token", localView: TestCanvas("local-\(user)"),
                remoteView: TestCanvas("remote-\(user)"),
                callTimeoutMillisecond: scenario == .timeout ? ringTimeoutMillis : 15_000,
                userExtension: ["nickname": "user \(user)"])
            try? await api.prepareForCall(prepareConfig: prepare)
            apis[user] = api
            timelines[user] = timeline
        }
        let (caller, callee) = (apis[Self.caller]!, apis[Self.callee]!)
        var failure: String?
        var showroom: DemoShowroom?
        func expect(_ what: String, within millis: Int64 = 5_000, _ condition: () -> Bool) async {
            var waited: Int64 = 0
            while !condition() && waited < millis {
                await pacer.pass(millis: 1)
                waited += 1
            }
            if !condition() && failure == nil { failure = "timed out waiting for \(what)" }
        }
        func state(_ user: UInt) -> CallStateType? { timelines[user]?.currentState }

        if scenario == .showroom, let hostEngine = engines[Self.callee], let hostTimeline = timelines[Self.callee] {
            let viewerTimeline = TimelineListener(userId: Self.viewer, clock: clock, start: start)
            timelines[Self.viewer] = viewerTimeline
            let room = DemoShowroom(
                host: Self.callee, hostEngine: hostEngine, hostTimeline: hostTimeline, viewer: Self.viewer,
                viewerEngine: makeEngine?(Self.viewer) ?? world.engine(userId: Self.viewer),
                viewerTimeline: viewerTimeline, channel: Self.showroomChannel)
            callee.addListener(listener: room)
            room.open()
            showroom = room
            await expect("the viewer to watch the host") { room.viewerSees == .both }
        }

        do {
            try await caller.call(
                remoteUserId: Self.callee, callType: scenario == .audio ? .audio : .video,
                callExtension: ["scenario": .string(scenario.rawValue)])
        } catch {
            failure = "call failed: \(error)"
        }
        await expect("the callee to ring") { state(Self.callee) == .calling }
        await pacer.pass(millis: ringMillis)
        switch scenario {
        case .video, .audio, .busy, .showroom:
            try? await callee.accept(remoteUserId: Self.caller)
            await expect("both sides connected") {
                state(Self.caller) == .connected && state(Self.callee) == .connected
            }
            if let showroom { await expect("the viewer to see the pause") { showroom.viewerSees == .nothing } }
            if scenario == .busy, let intruder = apis[Self.intruder] {
                try? await intruder.call(remoteUserId: Self.callee, callType: .video, callExtension: [:])
                await expect("the busy answer") { timelines[Self.intruder]?.states.last?.1 == .remoteCallBusy }
            }
            await pacer.pass(millis: holdMillis)
            try? await caller.hangup(remoteUserId: Self.callee, reason: "demo over")
        case .reject:
            try? await callee.reject(remoteUserId: Self.caller, reason: "not now")
        case .cancel:
            try? await caller.cancelCall()
        case .timeout:
            await pacer.pass(millis: Int64(ringTimeoutMillis))
        case .match:
            failure = "the match scenario runs on a real server: MatchDemoRun"
        }
        await expect("both sides back to prepared") {
            state(Self.caller) == .prepared && state(Self.callee) == .prepared
        }
        if let showroom {
            await expect("the viewer to see the host again") { showroom.viewerSees == .both }
            showroom.close()
            callee.removeListener(listener: showroom)
        }
        await pacer.pass(millis: networkLatencyMillis * 2)
        for (user, api) in apis {
            if let timeline = timelines[user] { api.removeListener(listener: timeline) }
            await api.deinitialize()
        }
        return Outcome(
            timelines: timelines.mapValues(\.lines),
            finalStates: timelines.compactMapValues { $0.states.last },
            costMaps: timelines.mapValues(\.costMap), failure: failure)
    }
}
