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
}
