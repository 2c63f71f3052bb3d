import CallAPITesting
import Testing

@testable import CallAPI

/// Shortfall 5: two users call each other at the same moment. Both must end in one call (the lower callId
/// wins), in the same room, connected — not each in the other's room.
@Suite("Glare")
struct GlareTests {
    /// Both call at once over a channel with latency; returns the two call ids (1's, 2's).
    static func glare(_ h: CallHarness) -> (String, String) {
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        _ = h[2].api.probe { $0.call(remoteUserId: 1, completion: $1) }
        let ids = (h[1].api.getCallId(), h[2].api.getCallId())
        h.clock.advance(byMillis: 1_000)
        return ids
    }

    static func expectOneCall(_ h: CallHarness, ids: (String, String)) {
        let winner = min(ids.0, ids.1)
        let winnerRoom = winner == ids.0 ? "room-1" : "room-2"
        #expect(h[1].api.state == .connected)
        #expect(h[2].api.state == .connected)
        #expect(h[1].api.getCallId() == winner)
        #expect(h[2].api.getCallId() == winner)
        #expect(h[1].engine.channel == winnerRoom)
        #expect(h[2].engine.channel == winnerRoom)
        #expect(h.world.members(of: winnerRoom) == [1, 2])
        #expect(h.world.occupiedChannels == [winnerRoom], "nobody is left in the losing room")
        #expect(h[1].engine.playbackVolume(of: 2) == 100 && h[2].engine.playbackVolume(of: 1) == 100)
        #expect(h[1].listener.connectCount == 1 && h[2].listener.connectCount == 1)
        let caller: UInt = winner == ids.0 ? 1 : 2
        for user: UInt in [1, 2] {
            #expect(
                h[user].listener.records.contains(
                    .connected(roomId: winnerRoom, callUserId: caller, currentUserId: user)))
        }
    }

    @Test("Both call at once (channel latency): one call, the same id and room, both connected", arguments: 0..<8)
    func simultaneousCalls(run: Int) {
        let h = CallHarness(latencyMillis: 50)
        let ids = Self.glare(h)
        #expect(ids.0 != ids.1)
        Self.expectOneCall(h, ids: ids)
        // And the call works: a hangup ends both.
        _ = h[1].api.probe { $0.hangup(remoteUserId: 2, reason: nil, completion: $1) }
        h.clock.advance(byMillis: 100)
        #expect(h[2].listener.lastState?.reason == .remoteHangup)
    }

    @Test("Glare with slow media: both end connected in the winner's room once the frames flow")
    func glareWithMediaLatency() {
        let h = CallHarness(timing: .init(joinLatencyMillis: 80, firstFrameLatencyMillis: 200), latencyMillis: 30)
        let ids = Self.glare(h)
        Self.expectOneCall(h, ids: ids)
    }

    @Test("The machine: when our call has the lower id we keep it and wait for the peer's accept")
    func ourCallWins() {
        var driver = MachineDriver(.callingAsCaller)
        let before = driver.machine.call
        let actions = driver.receive(.videoCall, callId: "call-peer")  // "call-own" < "call-peer"
        #expect(actions.onlyLogs)
        #expect(driver.machine.call == before)
        let accept = driver.receive(.accept, callId: MachineDriver.ownCallId)
        #expect(accept.states == [.connecting])
    }

    @Test("The machine: when their call has the lower id we drop ours, take theirs and accept it")
    func theirCallWins() throws {
        var driver = MachineDriver(.callingAsCaller)
        let actions = driver.receive(.videoCall, callId: "call-aaa")  // "call-aaa" < "call-own"
        #expect(driver.machine.callId == "call-aaa")
        #expect(driver.machine.call?.isCaller == false)
        #expect(driver.machine.call?.room == MachineDriver.peerRoom)
        #expect(driver.machine.state == .connecting)
        let sent = try #require(actions.sent.first)
        #expect(actions.sent.count == 1, "no cancel for our own call: the peer drops it by the same rule")
        #expect(sent.message.action == .accept)
        #expect(sent.message.callId == "call-aaa")
        #expect(sent.to == MachineDriver.peerId)
        #expect(actions.contains(.leaveRTC(remoteUid: MachineDriver.peerId)), "leaves its own room")
        #expect(actions.joins.map(\.channel) == [MachineDriver.peerRoom], "joins the winner's room")
        #expect(actions.reasons.last == .localAccepted)
        #expect(!actions.hasAskCanJoin)
    }

    @Test("Both call at once and the channel reorders (the loser's accept overtakes its call): still one call")
    func glareWithReorderedDelivery() {
        let h = CallHarness()
        h.network.inject(.hold, from: 1, to: 2)
        h.network.inject(.hold, from: 2, to: 1)
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        _ = h[2].api.probe { $0.call(remoteUserId: 1, completion: $1) }
        let ids = (h[1].api.getCallId(), h[2].api.getCallId())
        h.network.releaseHeld()
        h.clock.advance(byMillis: 1_000)
        Self.expectOneCall(h, ids: ids)
    }

    @Test("The machine: the winner gets the loser's accept before the loser's own call; the call must go on")
    func winnerGetsAcceptBeforeLosingCall() {
        var driver = MachineDriver(.callingAsCaller)
        driver.receive(.accept, callId: MachineDriver.ownCallId)
        driver.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: MachineDriver.ownRoom, uid: 2)))
        #expect(driver.machine.state == .connected)
        let late = driver.receive(.videoCall, callId: "call-peer")  // the peer's losing call, "call-own" < "call-peer"
        #expect(late.stateChanges.isEmpty)
        #expect(driver.machine.callId == MachineDriver.ownCallId)
    }
}
