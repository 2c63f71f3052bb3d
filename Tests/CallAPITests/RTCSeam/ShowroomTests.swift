import CallAPITesting
import Testing

@testable import CallAPI

@Suite("Showroom to 1v1")
struct ShowroomTests {
    static let live = RTCMediaOptions.broadcast

    @Test("the showroom machine pauses publishing at connected and resumes when the call is over")
    func machinePausesAndResumes() {
        var machine = ShowroomMachine()
        #expect(machine.handle(.open(media: Self.live)) == [.join(media: Self.live)])
        #expect(machine.handle(.callState(.calling)).isEmpty, "ringing: still live")
        #expect(machine.handle(.callState(.connecting)).isEmpty)
        #expect(machine.handle(.callState(.connected)) == [.updateMedia(Self.live.withoutPublishing)])
        #expect(machine.state == .pausedForCall(media: Self.live))
        #expect(machine.handle(.callState(.connected)).isEmpty)
        #expect(machine.handle(.callState(.prepared)) == [.updateMedia(Self.live)])
        #expect(machine.state == .live(media: Self.live))
    }

    @Test("a call that fails or is torn down by deinitialize resumes too; one that never connects pauses nothing")
    func machineOtherEndings() {
        for ending in [CallStateType.failed, .idle] {
            var machine = ShowroomMachine()
            _ = machine.handle(.open(media: Self.live))
            _ = machine.handle(.callState(.connected))
            #expect(machine.handle(.callState(ending)) == [.updateMedia(Self.live)], "\(ending)")
        }
        var machine = ShowroomMachine()
        _ = machine.handle(.open(media: Self.live))
        for state in [CallStateType.calling, .prepared] { #expect(machine.handle(.callState(state)).isEmpty) }
    }

    @Test("closing leaves, paused or not; a closed showroom ignores calls")
    func machineClose() {
        var machine = ShowroomMachine()
        #expect(machine.handle(.callState(.connected)).isEmpty)
        _ = machine.handle(.open(media: Self.live))
        _ = machine.handle(.callState(.connected))
        #expect(machine.handle(.close) == [.leave])
        #expect(machine.handle(.callState(.prepared)).isEmpty)
        #expect(machine.handle(.close).isEmpty)
    }

    @Test("simulated: the host stops publishing in the showroom at connected, stays in it, and resumes at hangup")
    func simulatedHostPausesForCall() {
        let (host, caller, viewer): (UInt, UInt, UInt) = (1, 2, 3)
        let harness = CallHarness(
            users: [host, caller], timing: .init(joinLatencyMillis: 40, firstFrameLatencyMillis: 30))
        let viewerEngine = harness.world.engine(userId: viewer)
        let seen = EventLog()
        viewerEngine.addEventListener(seen.listener)
        let showroom = Showroom(engine: harness[host].engine, channel: "showroom", token: "t", uid: host)
        showroom.open()
        harness[host].api.addListener(listener: showroom)
        viewerEngine.joinChannel("showroom", token: "t", uid: viewer, media: .audience)
        harness.clock.advance(byMillis: 100)
        #expect(seen.all.contains(.remoteFirstVideoFrameDecoded(channel: "showroom", uid: host)), "the viewer watches")
        #expect(showroom.isPublishing)

        harness[caller].api.call(remoteUserId: host, completion: nil)
        harness.clock.advance(byMillis: 50)
        #expect(showroom.isPublishing, "still live while it rings")
        harness[host].api.accept(remoteUserId: caller, completion: nil)
        harness.clock.advance(byMillis: 200)
        #expect(harness[host].listener.lastState?.state == .connected)
        #expect(!showroom.isPublishing)
        #expect(harness[host].engine.media(inSecondary: "showroom") == RTCMediaOptions.broadcast.withoutPublishing)
        #expect(harness.world.members(of: "showroom") == [host, viewer], "the host stays in the showroom")
        #expect(harness[host].engine.channel == harness[caller].roomId, "and is in the call's room")
        #expect(seen.all.last == .remotePublishingChanged(channel: "showroom", uid: host, audio: false, video: false))

        harness[caller].api.hangup(remoteUserId: host, reason: nil, completion: nil)
        harness.clock.advance(byMillis: 50)
        #expect(showroom.isPublishing)
        #expect(seen.all.last == .remotePublishingChanged(channel: "showroom", uid: host, audio: true, video: true))
        #expect(harness.world.members(of: "showroom") == [host, viewer])
        #expect(harness[host].engine.isReleased, "the call's channel is left; the showroom is not the call's")
        showroom.close()
        #expect(harness.world.members(of: "showroom") == [viewer])
    }

    @Test("simulated: joining a channel the engine is already in fails with a clear event")
    func secondaryJoinOfJoinedChannelFails() {
        let world = SimulatedRTCWorld(clock: ManualClock())
        let engine = world.engine(userId: 1)
        let log = EventLog()
        engine.addEventListener(log.listener)
        engine.joinChannel("room", token: "t", uid: 1, media: .call(.video))
        engine.joinSecondaryChannel("room", token: "t", uid: 1, media: .broadcast)
        engine.joinSecondaryChannel("show", token: "t", uid: 1, media: .broadcast)
        engine.joinSecondaryChannel("show", token: "t", uid: 1, media: .broadcast)
        let failures = log.all.filter { if case .joinFailed = $0 { true } else { false } }
        #expect(
            failures == [
                .joinFailed(channel: "room", code: SimulatedRTCEngine.alreadyInChannelCode, message: "already in room"),
                .joinFailed(channel: "show", code: SimulatedRTCEngine.alreadyInChannelCode, message: "already in show"),
            ])
        #expect(engine.secondaryChannels == ["show"])
    }
}
