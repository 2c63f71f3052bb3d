import CallAPI
import CallAPITesting
import Testing

@testable import callapi

@Suite("callapi demo scenarios")
struct DemoScenarioTests {
    private func run(_ scenario: DemoScenario) async -> DemoRun.Outcome {
        let clock = ManualClock()
        return await DemoRun(scenario: scenario, clock: clock, pacer: ManualPacer(clock: clock)).run()
    }

    private func finalReasons(_ outcome: DemoRun.Outcome) -> [UInt: CallStateReason] {
        outcome.finalStates.mapValues { $0.1 }
    }

    @Test(arguments: [
        (DemoScenario.video, [DemoRun.caller: CallStateReason.localHangup, DemoRun.callee: .remoteHangup]),
        (.audio, [DemoRun.caller: .localHangup, DemoRun.callee: .remoteHangup]),
        (.reject, [DemoRun.caller: .remoteRejected, DemoRun.callee: .localRejected]),
        (.cancel, [DemoRun.caller: .localCancelled, DemoRun.callee: .remoteCancelled]),
        (.busy, [DemoRun.caller: .localHangup, DemoRun.callee: .remoteHangup, DemoRun.intruder: .remoteCallBusy]),
        (.showroom, [DemoRun.caller: .localHangup, DemoRun.callee: .remoteHangup]),
    ])
    func scenarioEndsAsItsNameSays(scenario: DemoScenario, expected: [UInt: CallStateReason]) async {
        let outcome = await run(scenario)
        #expect(outcome.failure == nil)
        #expect(finalReasons(outcome) == expected)
        #expect(outcome.finalStates.values.allSatisfy { $0.0 == .prepared })
    }

    @Test func timeoutEndsBothSidesWithATimeoutReason() async {
        let outcome = await run(.timeout)
        #expect(outcome.failure == nil)
        #expect(finalReasons(outcome)[DemoRun.caller] == .callingTimeout)
        // Both ring timers fall due together (the callee's starts one latency later, when the caller's cancel
        // is one latency away), so the callee ends by its own timer or by the caller's cancel.
        #expect([.callingTimeout, .remoteCallingTimeout].contains(finalReasons(outcome)[DemoRun.callee]))
    }

    @Test func videoTimelinesGoThroughConnectedThenPrepared() async {
        let outcome = await run(.video)
        for user in [DemoRun.caller, DemoRun.callee] {
            let states = outcome.timelines[user]?.map(\.text).filter { $0.hasPrefix("state ") } ?? []
            #expect(states.suffix(2).first?.hasPrefix("state connected(") == true)
            #expect(states.last?.hasPrefix("state prepared(") == true)
        }
        let costs = outcome.costMaps[DemoRun.caller] ?? [:]
        #expect(costs["recvFirstFrame"] != nil)
        #expect(costs["acceptCall"] != nil)
    }

    @Test func timelineOffsetsFollowTheSimulatedLatencies() async {
        let outcome = await run(.video)
        let callee = outcome.timelines[DemoRun.callee] ?? []
        let ring = callee.first { $0.text.hasPrefix("state calling(") }
        // The call message crosses the 25 ms signaling latency before the callee rings.
        #expect(ring?.offsetMillis == 25)
    }

    @Test func showroomViewerSeesTheHostPauseAtConnectedAndResumeAfterHangup() async throws {
        let outcome = await run(.showroom)
        #expect(outcome.failure == nil)
        let viewer = outcome.timelines[DemoRun.viewer] ?? []
        let host = outcome.timelines[DemoRun.callee] ?? []
        let firstFrame = try #require(viewer.first { $0.text.contains("first video frame of host") })
        let paused = try #require(viewer.first { $0.text.contains("paused publishing") })
        let resumed = try #require(viewer.first { $0.text.contains("publishes audio true video true") })
        let connected = try #require(host.first { $0.text.hasPrefix("state connected(") })
        let hungUp = try #require(host.first { $0.text.hasPrefix("state prepared(remoteHangup") })
        #expect(firstFrame.offsetMillis < connected.offsetMillis, "the viewer watched before the call")
        #expect(paused.offsetMillis >= connected.offsetMillis && paused.offsetMillis < hungUp.offsetMillis)
        #expect(resumed.offsetMillis >= hungUp.offsetMillis)
        #expect(host.contains { $0.text.contains("publishing paused for the call") })
        #expect(host.contains { $0.text.contains("publishing again") })
    }
}
