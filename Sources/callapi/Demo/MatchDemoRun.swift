import CallAPI
import CallAPIServer
import CallAPIServerCore
import CallAPISignalClient
import CallAPISignalProtocol
import CallAPITesting
import Logging

/// `callapi demo --scenario match`: three users on a real server in this process, over loopback sockets, enter the
/// match queue with tags (docs/match.md). Alice and carol share a tag: the server matches them and asks alice (who
/// waited longer) to place the call, which carol's client accepts by itself; they talk, alice hangs up. Bob shares
/// no tag with anyone and is still waiting at the end. Media is simulated.
struct MatchDemoRun: Sendable {
    static let alice: UInt = 1001
    static let bob: UInt = 1002
    static let carol: UInt = 1003
    static let tags: [UInt: [String]] = [alice: ["paris", "chess"], bob: ["rome"], carol: ["chess", "tokyo"]]

    struct Outcome: Sendable {
        var timelines: [UInt: [TimelineListener.Line]]
        var finalStates: [UInt: (CallStateType, CallStateReason)]
        /// The matched call's id, as the server gave it.
        var callId: String?
        /// The server's ledger record of the matched call.
        var record: CallRecord?
        /// Users still waiting in the queue at the end.
        var waitingAtEnd: Int
        var failure: String?
    }

    var holdMillis: Int64 = 500
    var timing = SimulatedRTCWorld.Timing(joinLatencyMillis: 60, firstFrameLatencyMillis: 90, frameRate: 15)

    func run() async -> Outcome {
        let clock = SystemCallClock()
        let start = clock.nowMillis()
        var failure: String?
        var configuration = SignalServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.signingKey = .hs256(secret: "match-demo-\(UInt64.random(in: 1 ... .max))-secret-0123456789")
        configuration.adminKey = nil
        var quiet = Logger(label: "callapi.demo")
        quiet.logLevel = .critical
        let server: LocalSignalServer
        do {
            server = try await LocalSignalServer.start(configuration: configuration, logger: quiet)
        } catch {
            return Outcome(
                timelines: [:], finalStates: [:], callId: nil, record: nil, waitingAtEnd: 0,
                failure: "the server did not start: \(error)")
        }
        let world = SimulatedRTCWorld(clock: clock, timing: timing)
        var users: [UInt: (api: CallApiImpl, signal: SignalClient, agent: ServerCallAgent)] = [:]
        var timelines: [UInt: TimelineListener] = [:]
        var watchers: [Task<Void, Never>] = []
        let found = Locked<[UInt: MatchFound]>([:])

        for user in [Self.alice, Self.bob, Self.carol] {
            let signal = SignalClient(configuration: .init(url: "ws://127.0.0.1:\(server.port)"), logger: quiet)
            let api = CallApiImpl()
            // Every user opts in to auto-accept; only the callee of a match uses it.
            let agent = ServerCallAgent(signal: signal, api: api, autoAcceptsMatchedCalls: true, logger: quiet)
            let timeline = TimelineListener(userId: user, clock: clock, start: start)
            api.addListener(listener: timeline)
            let events = signal.events()
            watchers.append(
                Task {
                    for await event in events {
                        switch event {
                        case .matched(let match):
                            found.withLock { $0[user] = match }
                            timeline.note(
                                "matched with \(match.peerId) on \"\(match.tag)\" as \(match.role.rawValue) "
                                    + "(\(match.matchId), call \(match.callId))")
                        case .callPlaced(let order):
                            timeline.note(
                                "the server asks for a call to \(order.calleeId) with call id \(order.callId)")
                        default:
                            break
                        }
                    }
                })
            do {
                try await signal.login(
                    token: try await server.server.authority.issue(userId: "\(user)", ttlSeconds: 600).token)
                api.initialize(
                    config: CallConfig(
                        appId: "demo", userId: user, rtcEngine: world.engine(userId: user), signalClient: signal,
                        clock: clock))
                try await api.prepareForCall(
                    prepareConfig: PrepareConfig(
                        rtcToken: "demo-token", localView: TestCanvas("local-\(user)"),
                        remoteView: TestCanvas("remote-\(user)"), userExtension: ["nickname": "user \(user)"]))
            } catch {
                failure = failure ?? "user \(user) could not start: \(error)"
            }
            users[user] = (api, signal, agent)
            timelines[user] = timeline
        }

        func state(_ user: UInt) -> CallStateType? { timelines[user]?.currentState }
        func expect(_ what: String, within millis: Int64 = 5_000, _ condition: () -> Bool) async {
            let deadline = clock.nowMillis() + millis
            while !condition() && clock.nowMillis() < deadline {
                try? await Task.sleep(for: .milliseconds(5))
            }
            if !condition() && failure == nil { failure = "timed out waiting for \(what)" }
        }

        for user in [Self.alice, Self.bob, Self.carol] where failure == nil {
            let tags = Self.tags[user] ?? []
            do {
                try await users[user]?.signal.enterMatchQueue(tags: tags)
                timelines[user]?.note("entered the match queue with \(tags.joined(separator: ", "))")
            } catch {
                failure = "user \(user) could not enter the queue: \(error)"
            }
        }
        await expect("alice and carol to connect") {
            state(Self.alice) == .connected && state(Self.carol) == .connected
        }
        let waiting = server.server.matchWaitingCount
        timelines[Self.bob]?.note("still waiting: nobody else has rome (\(waiting) user waiting)")
        try? await Task.sleep(for: .milliseconds(holdMillis))
        if let alice = users[Self.alice]?.api {
            try? await alice.hangup(remoteUserId: Self.carol, reason: "demo over")
        }
        await expect("alice and carol back to prepared") {
            state(Self.alice) == .prepared && state(Self.carol) == .prepared
        }
        let callId = found.withLock { $0[Self.alice]?.callId }
        let record =
            callId == nil
            ? nil
            : try? await server.server.calls(CallQuery(userId: "\(Self.alice)", limit: 10)).calls.first {
                $0.callId == callId
            }
        for (user, parts) in users {
            if let timeline = timelines[user] { parts.api.removeListener(listener: timeline) }
            parts.agent.stop()
            await parts.api.deinitialize()
            parts.signal.logout()
        }
        for watcher in watchers { watcher.cancel() }
        await server.stop()
        return Outcome(
            timelines: timelines.mapValues(\.lines), finalStates: timelines.compactMapValues { $0.states.last },
            callId: callId, record: record, waitingAtEnd: waiting, failure: failure)
    }
}
