import CallAPITesting
import Testing

@testable import CallAPI

/// call-behaviour.md, "Cost map": milliseconds from the call's start on each side to each stage, first
/// occurrence only, in the connected event info.
@Suite("Cost map")
struct CostMapTests {
    static func costs(_ record: RecordingCallListener.StateRecord?) -> [String: Int] {
        (record?.eventInfo[kCostTimeMap]?.objectValue ?? [:]).compactMapValues(\.intValue)
    }

    @Test("With simulated latencies each side's connected info has every stage at its time")
    func costsFollowTheLatencies() throws {
        // Signaling 20 ms; join 50 ms; first frame 100 ms after both are in the channel.
        let h = CallHarness(timing: .init(joinLatencyMillis: 50, firstFrameLatencyMillis: 100), latencyMillis: 20)
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        h.clock.advance(byMillis: 100)  // the callee rang at 20, joined at 70
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        h.clock.advance(byMillis: 100)  // the accept arrives at 120, the first frames at 170
        let caller = try #require(h[1].listener.lastState)
        let callee = try #require(h[2].listener.lastState)
        #expect(caller.state == .connected && callee.state == .connected)
        #expect(
            Self.costs(caller) == [
                "remoteUserRecvCall": 0, "localFirstFrameDidCapture": 0, "localUserJoinChannel": 50,
                "localFirstFrameDidPublish": 50, "remoteUserJoinChannel": 70, "acceptCall": 120, "recvFirstFrame": 170,
            ])
        #expect(
            Self.costs(callee) == [
                "localFirstFrameDidCapture": 0, "localUserJoinChannel": 50, "localFirstFrameDidPublish": 50,
                "remoteUserJoinChannel": 50, "acceptCall": 80, "recvFirstFrame": 150,
            ])
    }

    @Test("The stages are the spec's names and grow in the order the call progresses", arguments: [0, 15, 40])
    func monotonic(latency: Int64) throws {
        let h = CallHarness(
            timing: .init(joinLatencyMillis: latency * 2, firstFrameLatencyMillis: latency * 3 + 1, frameRate: 15),
            latencyMillis: latency)
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        h.clock.advance(byMillis: latency + 1)
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        h.clock.advance(byMillis: 2_000)
        #expect(h[1].api.state == .connected)
        let caller = Self.costs(h[1].listener.stateRecords.last { $0.state == .connected })
        let names: Set = [
            "remoteUserRecvCall", "acceptCall", "localUserJoinChannel", "localFirstFrameDidCapture",
            "localFirstFrameDidPublish", "remoteUserJoinChannel", "recvFirstFrame",
        ]
        #expect(Set(caller.keys) == names)
        let a = try #require(caller["localUserJoinChannel"])
        let b = try #require(caller["remoteUserJoinChannel"])
        let c = try #require(caller["recvFirstFrame"])
        #expect(a <= b && b <= c)
        #expect(try #require(caller["remoteUserRecvCall"]) <= (try #require(caller["acceptCall"])))
        #expect(caller.values.allSatisfy { $0 >= 0 })
    }

    @Test("An audio call's cost map counts the audio publish")
    func audioCallCosts() {
        let h = CallHarness(timing: .init(joinLatencyMillis: 30, firstFrameLatencyMillis: 10))
        _ = h[1].api.probe { $0.call(remoteUserId: 2, callType: .audio, callExtension: [:], completion: $1) }
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        h.clock.advance(byMillis: 100)
        let caller = Self.costs(h[1].listener.lastState)
        #expect(caller["localFirstFrameDidPublish"] == 30)
        #expect(caller["localFirstFrameDidCapture"] == nil, "no camera in an audio call")
        #expect(caller["recvFirstFrame"] == 40)
    }

    @Test("Only the first occurrence of a stage counts")
    func firstOccurrenceOnly() {
        var driver = MachineDriver(.callingAsCaller)
        driver.advance(10)
        driver.handle(.rtc(.localJoined(channel: MachineDriver.ownRoom, uid: 1)))
        driver.advance(500)
        driver.handle(.rtc(.localJoined(channel: MachineDriver.ownRoom, uid: 1)))
        #expect(driver.machine.call?.costs.stages[CostMap.localUserJoinChannel] == 10)
        var map = CostMap()
        map.record("x", startedAt: 100, now: 150)
        map.record("x", startedAt: 100, now: 900)
        map.record("early", startedAt: 100, now: 90)
        #expect(map.stages == ["x": 50, "early": 0])
        #expect(map.json == .object(["x": .int(50), "early": .int(0)]))
    }

    @Test("The cost map starts afresh with each call")
    func freshPerCall() {
        let h = CallHarness(timing: .init(joinLatencyMillis: 30))
        h.reach(.connected)
        h.clock.advance(byMillis: 5_000)
        _ = h[1].api.probe { $0.hangup(remoteUserId: 2, reason: nil, completion: $1) }
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        h.clock.advance(byMillis: 100)
        let caller = Self.costs(h[1].listener.lastState)
        #expect(h[1].listener.lastState?.state == .connected)
        #expect(caller["localUserJoinChannel"] == 30)
        #expect(caller.values.allSatisfy { $0 < 1_000 }, "measured from the second call's start: \(caller)")
    }
}
