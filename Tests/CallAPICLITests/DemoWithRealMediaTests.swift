import CallAPI
import CallAPITesting
import Testing

@testable import callapi

/// `callapi demo --media webrtc`: both users in this process with WebRTC engines on an in-process hub, in
/// real time (media cannot run on a manual clock).
@Suite("callapi demo with real media", .enabled(if: PhoneMedia.webrtcUnavailableReason == nil))
struct DemoWithRealMediaTests {
    @Test func videoScenarioConnectsBothUsersOnADecodedFrame() async throws {
        var demo = DemoRun(scenario: .video, clock: SystemCallClock(), pacer: SleepingPacer())
        demo.makeEngine = try PhoneEngineFactory.inProcessWebRTC()
        demo.ringMillis = 0
        demo.holdMillis = 200
        let outcome = await demo.run()
        #expect(outcome.failure == nil)
        for user in [DemoRun.caller, DemoRun.callee] {
            // Connected only once a frame was decoded: on the frame itself when the accept came first (the usual
            // course), or on the accept when a loaded machine decoded the frame while the accept was on its way.
            let lines = outcome.timelines[user]?.map(\.text) ?? []
            let onFrame = lines.contains { $0.contains("state connected(recvRemoteFirstFrame)") }
            let frame = lines.firstIndex { $0.contains("event recvRemoteFirstFrame") }
            let connected = lines.firstIndex { $0.hasPrefix("state connected(") }
            #expect(onFrame || (frame != nil && connected != nil && frame! < connected!), "\(lines)")
            #expect(outcome.costMaps[user]?["recvFirstFrame"] != nil)
        }
        #expect(outcome.finalStates[DemoRun.caller]?.1 == .localHangup)
        #expect(outcome.finalStates[DemoRun.callee]?.1 == .remoteHangup)
    }

    @Test func showroomViewerSeesThePauseAndTheReturnWithRealMedia() async throws {
        var demo = DemoRun(scenario: .showroom, clock: SystemCallClock(), pacer: SleepingPacer())
        demo.makeEngine = try PhoneEngineFactory.inProcessWebRTC()
        demo.ringMillis = 0
        demo.holdMillis = 200
        let outcome = await demo.run()
        #expect(outcome.failure == nil)
        let viewer = outcome.timelines[DemoRun.viewer]?.map(\.text) ?? []
        #expect(viewer.contains { $0.contains("first video frame of host") }, "\(viewer)")
        #expect(viewer.contains { $0.contains("paused publishing") }, "\(viewer)")
        #expect(viewer.contains { $0.contains("publishes audio true video true") }, "\(viewer)")
        #expect(outcome.finalStates[DemoRun.callee]?.1 == .remoteHangup)
    }
}
