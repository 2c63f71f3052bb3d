import CallAPI
import CallAPITesting
import Foundation
import Testing

@Suite("Agora-shaped adapter example")
struct AgoraEngineAdapterTests {
    let fake = FakeAgoraEngine()
    let queue = DispatchQueue(label: "test.agora")
    let adapter: AgoraEngineAdapter
    let log = EventLog()

    init() {
        adapter = AgoraEngineAdapter(sdk: fake, queue: queue)
        adapter.addEventListener(log.listener)
    }

    /// Waits until the adapter's queued SDK calls have run.
    func flush() { queue.sync {} }

    @Test("each seam method is the SDK call a 2.x app makes")
    func seamCallsAreSDKCalls() {
        adapter.setLocalCanvas(TestCanvas())
        adapter.startPreview()
        adapter.joinChannel("room", token: "tok", uid: 1, media: .call(.video))
        adapter.setRemoteCanvas(TestCanvas(), uid: 2)
        adapter.setRemotePlaybackVolume(0, uid: 2)
        adapter.setRemotePlaybackVolume(100, uid: 2)
        adapter.renewToken("tok2")
        adapter.updateMedia(.call(.audio))
        adapter.stopPreview()
        adapter.setLocalCanvas(nil)
        adapter.leaveChannel()
        adapter.leaveChannel()
        flush()
        #expect(
            fake.calls == [
                "setupLocalVideo view", "startPreview",
                "joinChannelEx room uid=1 token=tok camera=true mic=true subAudio=true subVideo=true",
                "setupRemoteVideoEx room uid=2 view", "muteRemoteAudioStream 2 mute=true",
                "muteRemoteAudioStream 2 mute=false", "adjustUserPlaybackSignalVolume 2 100",
                "updateChannelEx room token=tok2", "updateChannelEx room camera=false mic=true", "stopPreview",
                "setupLocalVideo nil", "leaveChannelEx room",
            ])
        #expect(adapter.ntpWallTimeMillis() == 1_700_000_000_000)
    }

    @Test("each delegate callback is an event of its connection's channel")
    func callbacksAreChannelEvents() {
        adapter.joinChannel("room", token: "t", uid: 1, media: .call(.video))
        adapter.joinSecondaryChannel("show", token: "t", uid: 1, media: .broadcast)
        flush()
        let size = CGSize(width: 320, height: 240)
        fake.callback("room") { delegate, sdk in
            delegate.rtcEngine(sdk, didJoinChannel: "room", withUid: 1, elapsed: 10)
            delegate.rtcEngine(sdk, didJoinedOfUid: 2, elapsed: 20)
            delegate.rtcEngine(sdk, firstLocalVideoFrameWith: size, elapsed: 25)
            delegate.rtcEngine(sdk, firstLocalVideoFramePublishedWithElapsed: 26)
            delegate.rtcEngine(sdk, firstLocalAudioFramePublished: 27)
            delegate.rtcEngine(sdk, firstRemoteVideoFrameOfUid: 2, size: size, elapsed: 30)
            delegate.rtcEngine(sdk, firstRemoteAudioFrameOfUid: 2, elapsed: 31)
            delegate.rtcEngine(sdk, tokenPrivilegeWillExpire: "t")
            delegate.rtcEngine(sdk, didOfflineOfUid: 2, reason: .dropped)
            delegate.rtcEngine(sdk, didOccurError: 110)
        }
        fake.callback("show") { delegate, sdk in
            delegate.rtcEngine(sdk, didJoinChannel: "show", withUid: 1, elapsed: 5)
            delegate.rtcEngine(sdk, didVideoMuted: true, byUid: 9)
            delegate.rtcEngine(sdk, didAudioMuted: true, byUid: 9)
            delegate.rtcEngine(sdk, didLeaveChannelWith: "stats")
        }
        #expect(
            log.all == [
                .localJoined(channel: "room", uid: 1), .remoteJoined(channel: "room", uid: 2),
                .localFirstVideoFrameCaptured, .localFirstVideoFramePublished(channel: "room"),
                .localFirstAudioFramePublished(channel: "room"), .remoteFirstVideoFrameDecoded(channel: "room", uid: 2),
                .remoteFirstAudioFrameDecoded(channel: "room", uid: 2), .tokenWillExpire(channel: "room"),
                .remoteLeft(channel: "room", uid: 2, reason: 1), .error(code: 110, message: "Agora error 110"),
                .localJoined(channel: "show", uid: 1),
                .remotePublishingChanged(channel: "show", uid: 9, audio: true, video: false),
                .remotePublishingChanged(channel: "show", uid: 9, audio: false, video: false),
                .localLeft(channel: "show"),
            ])
    }

    @Test("the adapter keeps the delegates the SDK holds weakly, until it leaves")
    func delegatesKeptUntilLeave() {
        adapter.joinChannel("room", token: "t", uid: 1, media: .call(.video))
        flush()
        #expect(fake.callback("room") { _, _ in })
        adapter.leaveChannel()
        flush()
        #expect(!fake.callback("room") { _, _ in }, "released after leaveChannelEx")
    }

    @Test("an SDK refusal is a join failure; a second join of a joined channel is refused")
    func refusals() {
        fake.joinResult.withLock { $0 = -17 }
        adapter.joinChannel("room", token: "t", uid: 1, media: .call(.video))
        flush()
        fake.joinResult.withLock { $0 = 0 }
        adapter.joinSecondaryChannel("room", token: "t", uid: 1, media: .broadcast)
        flush()
        #expect(
            log.all == [
                .joinFailed(channel: "room", code: 17, message: "joinChannelEx returned -17"),
                .joinFailed(channel: "room", code: 17, message: "already in channel room"),
            ])
    }

    @Test("the showroom over the adapter: updateChannelEx stops and resumes publishing in the showroom")
    func showroomOverAdapter() {
        let showroom = Showroom(engine: adapter, channel: "show", token: "t", uid: 1)
        showroom.open()
        showroom.onCallStateChanged(
            with: .connected, stateReason: .recvRemoteFirstFrame, eventReason: "", eventInfo: [:])
        showroom.onCallStateChanged(with: .prepared, stateReason: .remoteHangup, eventReason: "", eventInfo: [:])
        flush()
        #expect(
            fake.calls == [
                "joinChannelEx show uid=1 token=t camera=true mic=true subAudio=false subVideo=false",
                "updateChannelEx show camera=false mic=false", "updateChannelEx show camera=true mic=true",
            ])
    }

    @Test("a CallAPI call over the adapter: joined, connected on the first remote frame, left at hangup")
    func callOverAdapter() async throws {
        let clock = ManualClock()
        let network = InMemorySignalNetwork(clock: clock)
        let world = SimulatedRTCWorld(clock: clock)
        let (caller, callee) = (CallApiImpl(), CallApiImpl())
        let recorder = RecordingCallListener()
        caller.addListener(listener: recorder)
        caller.initialize(
            config: CallConfig(userId: 1, rtcEngine: adapter, signalClient: network.client(userId: 1), clock: clock))
        callee.initialize(
            config: CallConfig(
                userId: 2, rtcEngine: world.engine(userId: 2), signalClient: network.client(userId: 2), clock: clock))
        try await caller.prepareForCall(prepareConfig: PrepareConfig(rtcToken: "tok", localView: TestCanvas()))
        try await callee.prepareForCall(prepareConfig: PrepareConfig(rtcToken: "tok"))

        try await caller.call(remoteUserId: 2)
        flush()
        let room = caller.getRoomId()
        #expect(
            fake.calls.contains(
                "joinChannelEx \(room) uid=1 token=tok camera=true mic=true subAudio=true subVideo=true"))
        #expect(fake.calls.contains("muteRemoteAudioStream 2 mute=true"), "the peer is muted until connected")
        fake.callback(room) { $0.rtcEngine($1, didJoinChannel: room, withUid: 1, elapsed: 1) }
        try await callee.accept(remoteUserId: 1)
        #expect(caller.state == .connecting)
        fake.callback(room) { $0.rtcEngine($1, firstRemoteVideoFrameOfUid: 2, size: .zero, elapsed: 1) }
        #expect(caller.state == .connected)
        flush()
        #expect(fake.calls.last == "adjustUserPlaybackSignalVolume 2 100")

        try await caller.hangup(remoteUserId: 2, reason: nil)
        flush()
        #expect(
            Array(fake.calls.suffix(4)) == [
                "stopPreview", "setupLocalVideo nil", "setupRemoteVideoEx \(room) uid=2 nil", "leaveChannelEx \(room)",
            ])
        #expect(recorder.events.contains(.joinRTCSuccessed))
        await caller.deinitialize()
        await callee.deinitialize()
    }
}
