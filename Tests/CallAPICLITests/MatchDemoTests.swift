import CallAPI
import Testing

@testable import callapi

/// `callapi demo --scenario match` on its real in-process server: two of three users match, the server-placed call
/// is accepted by itself and connects, the third user is still waiting.
@Suite struct MatchDemoTests {
    @Test func twoOfThreeUsersMatchConnectAndHangUpWhileTheThirdWaits() async throws {
        var demo = MatchDemoRun()
        demo.holdMillis = 50
        let outcome = await demo.run()
        #expect(outcome.failure == nil)
        #expect(outcome.finalStates[MatchDemoRun.alice]?.1 == .localHangup)
        #expect(outcome.finalStates[MatchDemoRun.carol]?.1 == .remoteHangup)
        #expect(outcome.finalStates[MatchDemoRun.bob]?.0 == .prepared)
        #expect(outcome.finalStates[MatchDemoRun.bob]?.1 == CallStateReason.none)
        #expect(outcome.waitingAtEnd == 1)

        let aliceLines = outcome.timelines[MatchDemoRun.alice]?.map(\.text) ?? []
        let carolLines = outcome.timelines[MatchDemoRun.carol]?.map(\.text) ?? []
        let callId = try #require(outcome.callId)
        #expect(
            aliceLines.contains(
                "matched with 1003 on \"chess\" as caller (\(callId.replacing("call-", with: "match-")), call \(callId))"
            ))
        #expect(aliceLines.contains("the server asks for a call to 1003 with call id \(callId)"))
        #expect(carolLines.contains { $0.hasPrefix("matched with 1001 on \"chess\" as callee") })
        // Carol's client accepted without her: her call went from ringing to accepted by herself.
        #expect(carolLines.contains("state connecting(localAccepted)"))
        #expect(carolLines.contains { $0.hasPrefix("state connected(") })

        let record = try #require(outcome.record)
        #expect(record.callId == callId)
        #expect(record.caller == "1001" && record.callee == "1003")
        #expect(record.outcome == .completed)

        let text = MatchDemoText.render(outcome)
        #expect(text.contains("still waiting in the match queue: 1 user(s)"))
        #expect(text.contains("server ledger: call \(callId) 1001 → 1003 completed"))
        #expect(text.contains("── user 1002"))
    }
}
