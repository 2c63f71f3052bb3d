import CallAPITesting
import Testing

@testable import CallAPI

@Suite("Pre-join at prepare")
struct PreJoinTests {
    /// Re-prepares user 1 with a fresh room per call and `preJoinsCallRoom` as given.
    static func harness(
        preJoin: Bool, timing: SimulatedRTCWorld.Timing = .init(), latencyMillis: Int64 = 0,
        provider: RTCTokenProvider? = nil
    ) -> CallHarness {
        let harness = CallHarness(timing: timing, latencyMillis: latencyMillis)
        harness.reprepare(1) {
            $0.roomId = ""
            $0.preJoinsCallRoom = preJoin
            $0.rtcTokenProvider = provider
        }
        harness.clock.advance(byMillis: timing.joinLatencyMillis)
        return harness
    }

    @Test("off by default: prepare joins nothing")
    func offByDefault() {
        #expect(PrepareConfig().preJoinsCallRoom == false)
        let harness = Self.harness(preJoin: false)
        #expect(harness[1].engine.channel == nil)
        #expect(harness.world.occupiedChannels.isEmpty)
    }

    @Test("on: prepare joins the next call's room, publishing nothing; call() takes it and only starts publishing")
    func callTakesThePreJoinedRoom() throws {
        let harness = Self.harness(preJoin: true, timing: .init(joinLatencyMillis: 100))
        let engine = harness[1].engine
        let room = try #require(engine.channel)
        #expect(room.hasPrefix("1-"), "a fresh room named from the user and the next call's id")
        #expect(harness.world.members(of: room) == [1])
        #expect(engine.media?.publishCamera == false && engine.media?.publishMicrophone == false)
        #expect(engine.joinCount == 1)

        harness[1].api.call(remoteUserId: 2, completion: nil)
        #expect(harness[1].api.getRoomId() == room)
        #expect(room.hasSuffix(harness[1].api.getCallId().filter { $0.isLetter || $0.isNumber || $0 == "-" }))
        #expect(engine.joinCount == 1, "no second join")
        #expect(engine.media == .call(.video))
        #expect(engine.isPreviewing && engine.localCanvas === harness[1].localView)
        let events = harness[1].listener.events
        #expect(events.contains(.joinRTCStart) && events.contains(.localJoined) && events.contains(.joinRTCSuccessed))
        let message = try #require(harness.messages(from: 1, to: 2).first)
        #expect(message.fromRoomId == room)

        harness[2].api.accept(remoteUserId: 1, completion: nil)
        harness.clock.advance(byMillis: 200)
        #expect(harness[1].listener.lastState?.state == .connected)
        #expect(harness[2].listener.lastState?.state == .connected)
    }

    @Test("after a call, the next call's room is pre-joined again (a new one)")
    func preJoinsAgainAfterTheCall() throws {
        let harness = Self.harness(preJoin: true)
        let first = try #require(harness[1].engine.channel)
        harness[1].api.call(remoteUserId: 2, completion: nil)
        harness[2].api.accept(remoteUserId: 1, completion: nil)
        harness[1].api.hangup(remoteUserId: 2, reason: nil, completion: nil)
        #expect(harness[1].listener.lastState?.state == .prepared)
        let second = try #require(harness[1].engine.channel)
        #expect(second != first)
        #expect(harness.world.members(of: second) == [1])
        #expect(harness.world.members(of: first).isEmpty)
    }

    @Test("an incoming call leaves the pre-joined room for the caller's")
    func incomingCallLeavesPreJoinedRoom() throws {
        let harness = Self.harness(preJoin: true)
        let preJoined = try #require(harness[1].engine.channel)
        harness[2].api.call(remoteUserId: 1, completion: nil)
        #expect(harness.world.members(of: preJoined).isEmpty)
        #expect(harness[1].engine.channel == harness[2].roomId, "joined the caller's room on ring")
        harness[1].api.accept(remoteUserId: 2, completion: nil)
        #expect(harness[1].listener.lastState?.state == .connected)
    }

    /// `prepareForCall` for user 1 with pre-join on and `change` applied, without clearing what it reported.
    static func prepareWithPreJoin(_ harness: CallHarness, _ change: (inout PrepareConfig) -> Void = { _ in }) {
        var config = PrepareConfig(
            roomId: harness[1].roomId, rtcToken: "token-1", localView: harness[1].localView,
            remoteView: harness[1].remoteView, preJoinsCallRoom: true)
        change(&config)
        harness[1].api.prepareForCall(prepareConfig: config, completion: nil)
    }

    @Test("a failed pre-join is reported, not retried, and the call joins as usual")
    func failedPreJoin() throws {
        let harness = CallHarness()
        harness.world.failNextJoin(userId: 1, code: 4)
        Self.prepareWithPreJoin(harness)
        #expect(harness[1].listener.errorMessages.count == 1)
        #expect(harness[1].listener.logs.contains { $0.message.contains("pre-join of room-1 failed") })
        #expect(harness[1].engine.joinCount == 1, "not retried")
        harness[1].api.call(remoteUserId: 2, completion: nil)
        #expect(harness[1].engine.joinCount == 2)
        harness[2].api.accept(remoteUserId: 1, completion: nil)
        #expect(harness[1].listener.lastState?.state == .connected)
    }

    @Test("with a token provider, the pre-join asks it for the next room's token first")
    func preJoinWithTokenProvider() async throws {
        let harness = CallHarness()
        let (joins, joined) = AsyncStream.makeStream(of: String.self)
        harness[1].engine.addEventListener { event in
            if case .localJoined(let channel, _) = event { joined.yield(channel) }
        }
        let asked = Locked<[String]>([])
        Self.prepareWithPreJoin(harness) {
            $0.roomId = ""
            $0.rtcTokenProvider = { channel, _ in
                asked.withLock { $0.append(channel) }
                return "token-for-\(channel)"
            }
        }
        var iterator = joins.makeAsyncIterator()
        let room = try #require(await iterator.next())
        #expect(room.hasPrefix("1-"))
        #expect(asked.withLock { $0 } == [room])
        #expect(harness[1].engine.token == "token-for-\(room)")
        // Wait for the call to be handled: the engine's thread may be handing CallAPI the join event right now,
        // in which case call() is queued behind it (seen under the thread sanitizer's slowdown).
        await withCheckedContinuation { done in harness[1].api.call(remoteUserId: 2) { _ in done.resume() } }
        #expect(harness[1].api.getRoomId() == room)
        #expect(harness[1].engine.joinCount == 1)
        #expect(asked.withLock { $0.count } == 1, "the call does not ask again")
    }

    @Test("deinitialize leaves the pre-joined room")
    func deinitializeLeaves() async {
        let harness = Self.harness(preJoin: true)
        #expect(harness[1].engine.channel != nil)
        await harness[1].api.deinitialize()
        #expect(harness[1].engine.channel == nil)
        #expect(harness.world.occupiedChannels.isEmpty)
    }

    @Test("measured: the caller's join leaves the call setup; call() to connected is no slower")
    func measuredSetup() throws {
        func measure(preJoin: Bool) throws -> (joinedMillis: Int64, connectedMillis: Int64) {
            let timing = SimulatedRTCWorld.Timing(joinLatencyMillis: 300, firstFrameLatencyMillis: 90, frameRate: 15)
            let harness = Self.harness(preJoin: preJoin, timing: timing, latencyMillis: 25)
            let acceptor = Acceptor(api: harness[2].api, caller: 1)
            harness[2].api.addListener(listener: acceptor)
            let start = harness.clock.nowMillis()
            harness[1].api.call(remoteUserId: 2, completion: nil)
            while harness[1].listener.lastState?.state != .connected && harness.clock.nowMillis() - start < 5_000 {
                harness.clock.advance(byMillis: 1)
            }
            let costs = try #require(harness[1].listener.lastState?.eventInfo[kCostTimeMap]?.objectValue)
            let joined = try #require(costs[CostMap.localUserJoinChannel]?.intValue)
            return (Int64(joined), harness.clock.nowMillis() - start)
        }
        let (plain, preJoined) = (try measure(preJoin: false), try measure(preJoin: true))
        print(
            "pre-join, join 300 ms, signaling 25 ms, callee accepting on ring: caller joined after "
                + "\(plain.joinedMillis) ms by default, \(preJoined.joinedMillis) ms pre-joined; connected after "
                + "\(plain.connectedMillis) ms by default, \(preJoined.connectedMillis) ms pre-joined")
        #expect(plain.joinedMillis == 300)
        #expect(preJoined.joinedMillis == 0)
        #expect(plain.connectedMillis < 5_000)
        #expect(preJoined.connectedMillis <= plain.connectedMillis)
    }
}

/// Accepts the call from `caller` as soon as it rings.
private final class Acceptor: CallApiListenerProtocol {
    let api: CallApiImpl
    let caller: UInt

    init(api: CallApiImpl, caller: UInt) {
        self.api = api
        self.caller = caller
    }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        if state == .calling { api.accept(remoteUserId: caller, completion: nil) }
    }
}
