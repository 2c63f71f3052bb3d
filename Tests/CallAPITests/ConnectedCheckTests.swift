import CallAPITesting
import Testing

@testable import CallAPI

/// call-behaviour.md, "The connected check": connected once connecting and the remote first frame is in
/// (video frame for video, audio frame for audio), in either order, or at accept when waiting is disabled.
@Suite("Connected check and first-frame gating")
struct ConnectedCheckTests {
    static let timing = SimulatedRTCWorld.Timing(firstFrameLatencyMillis: 300)

    @Test(
        "Accept before the first frame: connecting, then connected(recvRemoteFirstFrame) when the frame arrives",
        arguments: CallType.allCases)
    func acceptBeforeFirstFrame(type: CallType) {
        let h = CallHarness(timing: Self.timing)
        _ = h[1].api.probe { $0.call(remoteUserId: 2, callType: type, callExtension: [:], completion: $1) }
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(h[1].api.state == .connecting)
        #expect(h[2].api.state == .connecting)
        h.clock.advance(byMillis: 299)
        #expect(h[1].api.state == .connecting)
        #expect(h[2].api.state == .connecting)
        h.clock.advance(byMillis: 1)
        for user: UInt in [1, 2] {
            #expect(h[user].api.state == .connected)
            #expect(h[user].listener.lastState?.reason == .recvRemoteFirstFrame)
            #expect(h[user].listener.connectCount == 1)
        }
    }

    @Test(
        "First frame before accept: remembered in calling; connected as soon as both accepted",
        arguments: CallType.allCases)
    func firstFrameBeforeAccept(type: CallType) {
        let h = CallHarness(timing: Self.timing)
        _ = h[1].api.probe { $0.call(remoteUserId: 2, callType: type, callExtension: [:], completion: $1) }
        h.clock.advance(byMillis: 500)
        #expect(h[1].api.state == .calling, "a first frame before connecting is not acted on")
        #expect(h[2].api.state == .calling)
        #expect(h[1].listener.events.contains(.recvRemoteFirstFrame))
        #expect(h[2].listener.events.contains(.recvRemoteFirstFrame))
        h[1].listener.reset()
        h[2].listener.reset()
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(h[2].listener.stateReasons == [.init(.connecting, .localAccepted), .init(.connected, .localAccepted)])
        #expect(
            h[1].listener.stateReasons == [.init(.connecting, .remoteAccepted), .init(.connected, .remoteAccepted)])
    }

    @Test("An audio call connects on the audio frame, not on a video frame")
    func audioCallWaitsForAudioFrame() {
        let h = CallHarness(timing: Self.timing)
        _ = h[1].api.probe { $0.call(remoteUserId: 2, callType: .audio, callExtension: [:], completion: $1) }
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        h.clock.advance(byMillis: 100)
        h[1].engine.emit(.remoteFirstVideoFrameDecoded(channel: "room-1", uid: 2))
        #expect(h[1].api.state == .connecting, "a video frame does not connect an audio call")
        h.clock.advance(byMillis: 200)
        #expect(h[1].api.state == .connected)
        #expect(h[1].listener.lastState?.reason == .recvRemoteFirstFrame)
        #expect(h[1].engine.media == .call(.audio))
        #expect(h[1].engine.media?.publishCamera == false)
    }

    @Test("A video call connects on the video frame, not on an audio frame")
    func videoCallWaitsForVideoFrame() {
        var driver = MachineDriver(.connecting, type: .video)
        let audio = driver.handle(.rtc(.remoteFirstAudioFrameDecoded(channel: MachineDriver.ownRoom, uid: 2)))
        #expect(audio.stateChanges.isEmpty)
        #expect(driver.machine.state == .connecting)
        let video = driver.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: MachineDriver.ownRoom, uid: 2)))
        #expect(video.reasons == [.recvRemoteFirstFrame])
        #expect(driver.machine.state == .connected)
    }

    @Test("The machine: connected reasons in each order, one connected only, first frame counted once")
    func machineOrders() {
        var frameLast = MachineDriver(.connecting)
        #expect(
            frameLast.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: "room-1", uid: 2))).reasons == [
                .recvRemoteFirstFrame
            ])
        #expect(frameLast.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: "room-1", uid: 2))).isEmpty)

        var frameFirst = MachineDriver(.callingAsCaller)
        #expect(frameFirst.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: "room-1", uid: 2))).stateChanges.isEmpty)
        let accepted = frameFirst.receive(.accept, callId: MachineDriver.ownCallId)
        #expect(accepted.reasons == [.remoteAccepted, .remoteAccepted])
        #expect(accepted.states == [.connecting, .connected])

        var callee = MachineDriver(.callingAsCallee)
        callee.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: MachineDriver.peerRoom, uid: 2)))
        let accept = callee.handle(.accept(remoteUserId: 2))
        #expect(accept.states == [.connecting, .connected])
        #expect(accept.reasons == [.localAccepted, .localAccepted])
    }

    @Test("firstFrameWaittingDisabled: connected at accept, without waiting for any frame")
    func firstFrameWaitingDisabled() {
        let h = CallHarness(
            timing: .init(firstFrameLatencyMillis: 60_000), prepare: PrepareConfig(firstFrameWaittingDisabled: true))
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(
            h[2].listener.stateReasons.suffix(2) == [
                .init(.connecting, .localAccepted), .init(.connected, .localAccepted),
            ])
        #expect(
            h[1].listener.stateReasons.suffix(2) == [
                .init(.connecting, .remoteAccepted), .init(.connected, .remoteAccepted),
            ])
        #expect(!h[1].listener.events.contains(.recvRemoteFirstFrame))

        var driver = MachineDriver(
            .callingAsCaller, config: MachineDriver.prepareConfig(firstFrameWaittingDisabled: true))
        #expect(driver.receive(.accept, callId: MachineDriver.ownCallId).states == [.connecting, .connected])
    }

    @Test("Entering connected unmutes the peer and reports room, peer, self, callId and the cost map")
    func connectedInfo() throws {
        var driver = MachineDriver(.connecting)
        let actions = driver.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: "room-1", uid: 2)))
        #expect(actions.volumes.map(\.uid) == [2])
        #expect(actions.volumes.map(\.volume) == [100])
        #expect(actions.hasStopTimer)
        let info = try #require(actions.stateChanges.last?.eventInfo)
        #expect(info.string(kFromRoomId) == MachineDriver.ownRoom)
        #expect(info.int(kFromUserId) == 2)
        #expect(info.int(kRemoteUserId) == 1)
        #expect(info.string(kCallId) == MachineDriver.ownCallId)
        #expect(info[kCostTimeMap]?.objectValue != nil)
        #expect(actions.connects.count == 1)
        #expect(actions.connects.first?.callerId == 1)
        #expect(actions.connects.first?.selfId == 1)
        #expect(actions.connects.first?.room == MachineDriver.ownRoom)
    }

    @Test("onCallConnected names the caller and the current user on both sides")
    func onCallConnected() {
        let h = CallHarness()
        h.reach(.callingAsCaller)
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(h[1].listener.records.contains(.connected(roomId: "room-1", callUserId: 1, currentUserId: 1)))
        #expect(h[2].listener.records.contains(.connected(roomId: "room-1", callUserId: 1, currentUserId: 2)))
        #expect(h[1].listener.lastState?.eventInfo.int(kFromUserId) == 2)
        #expect(h[1].listener.lastState?.eventInfo.int(kRemoteUserId) == 1)
        #expect(h[2].listener.lastState?.eventInfo.int(kFromUserId) == 1)
        #expect(h[2].listener.lastState?.eventInfo.int(kRemoteUserId) == 2)
    }
}

/// When the callee joins RTC: at ring when `canJoinRtcOnCalling` allows (the default), else at accept.
@Suite("Joining on ring or on accept")
struct CanJoinRtcOnCallingTests {
    @Test("canJoinRtcOnCalling false: the callee joins on accept, not on ring")
    func joinsOnAccept() {
        let h = CallHarness(canJoinRtcOnCalling: false)
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        #expect(h[2].api.state == .calling)
        #expect(h[2].engine.channel == nil)
        #expect(h[2].engine.joinCount == 0)
        #expect(h[1].engine.channel == "room-1", "the caller joins when it calls")
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(h[2].engine.channel == "room-1")
        #expect(h[2].engine.joinCount == 1)
        #expect(h[1].api.state == .connected && h[2].api.state == .connected)
    }

    @Test("Default (true): the callee joins on ring, muted")
    func joinsOnRing() {
        let h = CallHarness()
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        #expect(h[2].engine.channel == "room-1")
        #expect(h[2].engine.playbackVolume(of: 1) == 0)
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(h[2].engine.joinCount == 1, "no second join at accept")
    }

    @Test("Any listener saying true allows the early join; with no listener it is allowed")
    func anyListenerAllows() {
        let h = CallHarness(canJoinRtcOnCalling: false)
        let yes = RecordingCallListener(canJoinRtcOnCalling: true)
        h[2].api.addListener(listener: yes)
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        #expect(h[2].engine.channel == "room-1")
        withExtendedLifetime(yes) {}

        let bare = CallHarness()
        bare[2].api.removeListener(listener: bare[2].listener)
        _ = bare[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        #expect(bare[2].api.state == .calling)
        #expect(bare[2].engine.channel == "room-1")
    }

    @Test("The machine joins only when the answer is yes, and only for the ringing call")
    func machineEarlyJoin() {
        var no = MachineDriver(.prepared)
        #expect(!no.ringFromPeer(canJoin: false).hasJoin)
        #expect(no.handle(.accept(remoteUserId: 2)).joins.map(\.channel) == [MachineDriver.peerRoom])

        var late = MachineDriver(.prepared)
        late.receive(.videoCall, callId: "c")
        #expect(late.handle(.earlyJoinDecided(callId: "other", allowed: true)).isEmpty)
        #expect(late.handle(.earlyJoinDecided(callId: "c", allowed: true)).hasJoin)
    }

    @Test("The calling state reaches the listener before the engine is asked to join")
    func callingReportedBeforeJoin() {
        let h = CallHarness()
        let probe1 = EngineStateAtCalling(engine: h[1].engine)
        let probe2 = EngineStateAtCalling(engine: h[2].engine)
        h[1].api.addListener(listener: probe1)
        h[2].api.addListener(listener: probe2)
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        #expect(probe1.joinCountAtCalling == [0])
        #expect(probe2.joinCountAtCalling == [0])
        #expect(h[1].engine.joinCount == 1 && h[2].engine.joinCount == 1)
    }
}

/// Records how many joins the engine had seen when `calling` was reported.
final class EngineStateAtCalling: CallApiListenerProtocol {
    let engine: SimulatedRTCEngine
    private let seen = Locked<[Int]>([])
    init(engine: SimulatedRTCEngine) { self.engine = engine }
    var joinCountAtCalling: [Int] { seen.withLock { $0 } }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        if state == .calling {
            let joins = engine.joinCount
            seen.withLock { $0.append(joins) }
        }
    }
}
