import CallAPI
import CallAPITesting
import Foundation
import Testing

@testable import CallAPIWebRTC

// Pre-join at prepare with real media, measured against the default. Part of the serialized engine suite.
extension WebRTCEngineTests {
    /// One call from user 1 to user 2, who joins as it rings and accepts at once: the milliseconds from
    /// `call()` to the caller connected, and the caller's `localUserJoinChannel` cost.
    private func timedCall(preJoin: Bool, run: Int) async throws -> (connectedMillis: Int, joinCost: Int) {
        let hub = InProcessChannelHub()
        let clock = SystemCallClock()
        let network = InMemorySignalNetwork(clock: clock)
        let apis = [CallApiImpl(), CallApiImpl()]
        let engines = [WebRTCEngine(transport: hub, label: "caller"), WebRTCEngine(transport: hub, label: "callee")]
        for (index, api) in apis.enumerated() {
            let uid = UInt(index + 1)
            api.initialize(
                config: CallConfig(
                    userId: uid, rtcEngine: engines[index], signalClient: network.client(userId: uid), clock: clock))
        }
        // Added after CallAPI's own listener, so it hears the pre-join's localJoined only once CallAPI has it.
        let callerEvents = EventRecorder(engines[0])
        for (index, api) in apis.enumerated() {
            try await api.prepareForCall(
                prepareConfig: PrepareConfig(
                    rtcToken: "t", localView: TestCanvas(), remoteView: TestCanvas(), callTimeoutMillisecond: 30_000,
                    preJoinsCallRoom: preJoin && index == 0))
        }
        let (caller, callee) = (apis[0], apis[1])
        if preJoin {
            _ = try await callerEvents.wait("the pre-join") { if case .localJoined = $0 { true } else { false } }
        }
        let callerStates = caller.stateChanges
        let calleeStates = callee.stateChanges
        let started = Date()
        try await caller.call(remoteUserId: 2, callType: .video)
        try await within(20, "the callee ringing") {
            for await change in calleeStates where change.state == .calling { return }
        }
        try await callee.accept(remoteUserId: 1)
        let connected = try await within(20, "the caller connected (run \(run))") {
            for await change in callerStates where change.state == .connected { return change }
            throw TimedOut(what: "caller states ended")
        }
        let millis = Int(Date().timeIntervalSince(started) * 1000)
        let costs = connected.eventInfo[kCostTimeMap]?.objectValue ?? [:]
        try await caller.hangup(remoteUserId: 2)
        for api in apis { await api.deinitialize() }
        return (millis, costs["localUserJoinChannel"]?.intValue ?? -1)
    }

    @Test func preJoinTakesTheCallersJoinOutOfTheCallSetup() async throws {
        var results: [Bool: [(connectedMillis: Int, joinCost: Int)]] = [:]
        for run in 0..<3 {
            for preJoin in [false, true] {
                results[preJoin, default: []].append(try await timedCall(preJoin: preJoin, run: run))
            }
        }
        func median(_ values: [Int]) -> Int { values.sorted()[values.count / 2] }
        for preJoin in [false, true] {
            let runs = results[preJoin] ?? []
            print(
                "pre-join \(preJoin ? "on " : "off"): call() to caller connected \(runs.map(\.connectedMillis)) ms "
                    + "(median \(median(runs.map(\.connectedMillis)))), caller joined after \(runs.map(\.joinCost)) ms")
        }
        #expect(results[true]?.allSatisfy { $0.joinCost == 0 } == true, "pre-joined: in the room at call()")
        #expect(results[false]?.allSatisfy { $0.joinCost > 0 } == true, "default: the join follows call()")
    }
}
