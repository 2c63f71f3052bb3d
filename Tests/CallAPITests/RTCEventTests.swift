import CallAPITesting
import Testing

@testable import CallAPI

/// call-behaviour.md, "RTC events": only those about the current call's room and peer.
@Suite("RTC events")
struct RTCEventTests {
    static let room = MachineDriver.ownRoom
    static let peer = MachineDriver.peerId

    @Test("local joined: events localJoined and joinRTCSuccessed, cost localUserJoinChannel")
    func localJoined() {
        var driver = MachineDriver(.callingAsCaller)
        driver.advance(40)
        let actions = driver.handle(.rtc(.localJoined(channel: Self.room, uid: 1)))
        #expect(actions.events == [.localJoined, .joinRTCSuccessed])
        #expect(driver.machine.call?.costs.stages[CostMap.localUserJoinChannel] == 40)
    }

    @Test("remote joined: event remoteJoined, cost remoteUserJoinChannel")
    func remoteJoined() {
        var driver = MachineDriver(.callingAsCaller)
        driver.advance(70)
        let actions = driver.handle(.rtc(.remoteJoined(channel: Self.room, uid: Self.peer)))
        #expect(actions.events == [.remoteJoined])
        #expect(driver.machine.call?.costs.stages[CostMap.remoteUserJoinChannel] == 70)
    }

    @Test("remote left: event remoteLeft with the engine's reason; the call goes on")
    func remoteLeft() {
        var driver = MachineDriver(.connected)
        let actions = driver.handle(.rtc(.remoteLeft(channel: Self.room, uid: Self.peer, reason: 1)))
        #expect(actions.events == [.remoteLeft])
        #expect(actions.eventReason(of: .remoteLeft) == "1")
        #expect(driver.machine.state == .connected)
    }

    @Test(
        "the peer's media interrupted and resumed: events mediaReconnecting and mediaReconnected (the gap); the call stays connected"
    )
    func mediaReconnecting() {
        var driver = MachineDriver(.connected)
        let interrupted = driver.handle(.rtc(.remoteMediaInterrupted(channel: Self.room, uid: Self.peer)))
        #expect(interrupted.events == [.mediaReconnecting])
        #expect(driver.machine.state == .connected)
        let resumed = driver.handle(.rtc(.remoteMediaResumed(channel: Self.room, uid: Self.peer, gapMillis: 2100)))
        #expect(resumed.events == [.mediaReconnected])
        #expect(resumed.eventReason(of: .mediaReconnected) == "2100")
        #expect(driver.machine.state == .connected)
        // Another room's or another user's media is not this call's.
        #expect(driver.handle(.rtc(.remoteMediaInterrupted(channel: "elsewhere", uid: Self.peer))).events.isEmpty)
        #expect(driver.handle(.rtc(.remoteMediaInterrupted(channel: Self.room, uid: 4242))).events.isEmpty)
    }

    @Test("first remote video frame in a video call: event recvRemoteFirstFrame, cost recvFirstFrame")
    func firstVideoFrame() {
        var driver = MachineDriver(.callingAsCaller)
        driver.advance(90)
        let actions = driver.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: Self.room, uid: Self.peer)))
        #expect(actions.events == [.recvRemoteFirstFrame])
        #expect(driver.machine.call?.media.firstFrameArrived == true)
        #expect(driver.machine.call?.costs.stages[CostMap.recvFirstFrame] == 90)
        #expect(driver.machine.state == .calling, "remembered, not acted on before connecting")
    }

    @Test("The first frame that counts is the video one for video calls and the audio one for audio calls")
    func firstFrameKindFollowsCallType() {
        var video = MachineDriver(.callingAsCaller, type: .video)
        #expect(video.handle(.rtc(.remoteFirstAudioFrameDecoded(channel: Self.room, uid: Self.peer))).isEmpty)
        #expect(video.machine.call?.media.firstFrameArrived == false)

        var audio = MachineDriver(.callingAsCaller, type: .audio)
        #expect(audio.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: Self.room, uid: Self.peer))).isEmpty)
        #expect(audio.machine.call?.media.firstFrameArrived == false)
        #expect(
            audio.handle(.rtc(.remoteFirstAudioFrameDecoded(channel: Self.room, uid: Self.peer))).events == [
                .recvRemoteFirstFrame
            ])
    }

    @Test("local video captured and published, local audio published: their events and costs")
    func localFrames() {
        var driver = MachineDriver(.callingAsCaller)
        driver.advance(10)
        #expect(driver.handle(.rtc(.localFirstVideoFrameCaptured)).events == [.captureFirstLocalVideoFrame])
        driver.advance(10)
        #expect(
            driver.handle(.rtc(.localFirstAudioFramePublished(channel: Self.room))).events == [
                .publishFirstLocalAudioFrame
            ])
        #expect(
            driver.machine.call?.costs.stages[CostMap.localFirstFrameDidPublish] == nil,
            "video call: audio does not count")
        driver.advance(10)
        #expect(
            driver.handle(.rtc(.localFirstVideoFramePublished(channel: Self.room))).events == [
                .publishFirstLocalVideoFrame
            ])
        #expect(driver.machine.call?.costs.stages[CostMap.localFirstFrameDidCapture] == 10)
        #expect(driver.machine.call?.costs.stages[CostMap.localFirstFrameDidPublish] == 30)

        var audio = MachineDriver(.callingAsCaller, type: .audio)
        audio.advance(25)
        #expect(
            audio.handle(.rtc(.localFirstAudioFramePublished(channel: Self.room))).events == [
                .publishFirstLocalAudioFrame
            ])
        #expect(audio.machine.call?.costs.stages[CostMap.localFirstFrameDidPublish] == 25, "audio call: audio counts")
    }

    @Test("token will expire: tokenPrivilegeWillExpire; error: onCallError(rtcOccurError, rtc, code, message)")
    func tokenAndError() {
        var driver = MachineDriver(.prepared)
        #expect(driver.handle(.rtc(.tokenWillExpire(channel: Self.room))) == [.notifyTokenWillExpire])
        #expect(
            driver.handle(.rtc(.error(code: 110, message: "camera"))) == [
                .notifyError(.rtcOccurError, .rtc, code: 110, message: "camera")
            ])
        #expect(driver.machine.state == .prepared)
    }

    @Test("Events about another room or another user are ignored")
    func otherRoomsAndUsersAreIgnored() {
        var driver = MachineDriver(.connecting)
        let before = driver.machine.call
        let events: [RTCEngineEvent] = [
            .localJoined(channel: "elsewhere", uid: 1),
            .remoteJoined(channel: Self.room, uid: 9),
            .remoteJoined(channel: "elsewhere", uid: Self.peer),
            .remoteLeft(channel: Self.room, uid: 9, reason: 0),
            .remoteFirstVideoFrameDecoded(channel: Self.room, uid: 9),
            .remoteFirstVideoFrameDecoded(channel: "elsewhere", uid: Self.peer),
            .localFirstVideoFramePublished(channel: "elsewhere"),
            .joinFailed(channel: "elsewhere", code: 1, message: "x"),
        ]
        for event in events {
            #expect(driver.handle(.rtc(event)).isEmpty, "\(event)")
        }
        #expect(driver.machine.call == before)
        #expect(driver.machine.state == .connecting)
    }

    @Test("RTC events outside a call, or in idle, change nothing")
    func eventsOutsideACall() {
        var prepared = MachineDriver(.prepared)
        #expect(prepared.handle(.rtc(.remoteFirstVideoFrameDecoded(channel: Self.room, uid: Self.peer))).isEmpty)
        #expect(prepared.handle(.rtc(.localJoined(channel: Self.room, uid: 1))).isEmpty)
        var idle = MachineDriver(.idleInitialized)
        #expect(idle.handle(.rtc(.error(code: 1, message: "x"))).isEmpty)
        #expect(idle.handle(.rtc(.tokenWillExpire(channel: Self.room))).isEmpty)
    }

    @Test("A failed join ends the call: the peer is told, the endpoint goes failed(joinRTCFailed)")
    func joinFailedEndsTheCall() throws {
        var driver = MachineDriver(.callingAsCaller)
        let actions = driver.handle(.rtc(.joinFailed(channel: Self.room, code: 17, message: "no media")))
        #expect(actions.reasons == [.joinRTCFailed])
        #expect(driver.machine.state == .failed)
        #expect(actions.sent.map(\.message.action) == [.cancelCall])
        #expect(actions.contains(.notifyError(.rtcOccurError, .rtc, code: 17, message: "no media")))
        #expect(actions.hasLeave)

        let h = CallHarness()
        h.world.failNextJoin(userId: 1)
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        #expect(h[1].api.state == .failed)
        #expect(h[1].listener.lastState?.reason == .joinRTCFailed)
        #expect(h[1].listener.records.contains(.error(.rtcOccurError, .rtc, code: 17)))
        #expect(h[2].listener.lastState?.reason == .remoteCancelled)
        #expect(h[1].engine.isReleased && h[2].engine.isReleased)
    }

    @Test("Through the shell: engine events reach the listener as events, token expiry and errors")
    func shellForwardsEngineEvents() {
        let h = CallHarness()
        h.reach(.callingAsCaller)
        #expect(h[1].listener.events.isEmpty)
        h[1].engine.emit(.tokenWillExpire(channel: "room-1"))
        h[1].engine.emit(.error(code: 42, message: "boom"))
        h[1].engine.emit(.remoteLeft(channel: "room-1", uid: 2, reason: 1))
        #expect(h[1].listener.records.contains(.tokenWillExpire))
        #expect(h[1].listener.records.contains(.error(.rtcOccurError, .rtc, code: 42)))
        #expect(h[1].listener.errorMessages == ["boom"])
        #expect(h[1].listener.events == [.remoteLeft])
        #expect(h[1].listener.reason(of: .remoteLeft) == "1")
    }

    @Test("A full video call reports the RTC events on both sides")
    func fullCallEvents() {
        let h = CallHarness()
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        for user: UInt in [1, 2] {
            let events = h[user].listener.events
            for expected in [
                CallEvent.joinRTCStart, .localJoined, .joinRTCSuccessed, .remoteJoined, .recvRemoteFirstFrame,
                .captureFirstLocalVideoFrame, .publishFirstLocalVideoFrame, .publishFirstLocalAudioFrame,
            ] {
                #expect(events.contains(expected), "user \(user) misses \(expected)")
            }
        }
    }
}
