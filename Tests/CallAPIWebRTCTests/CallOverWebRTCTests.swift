import CallAPI
import CallAPITesting
import Foundation
import Testing

@testable import CallAPIWebRTC

// Full CallAPI over real media: two endpoints on in-memory signaling, each with a WebRTC engine on one
// in-process hub. Part of the serialized engine suite, since it runs pipelines too.
extension WebRTCEngineTests {
    /// The callee joins the channel only on accept (`canJoinRtcOnCalling` false) and accepts as soon as it
    /// rings, so both sides are accepted before any media flows: each connects on a real first frame.
    @Test(arguments: [CallType.video, .audio])
    func callConnectsOnARealFirstFrame(type: CallType) async throws {
        let hub = InProcessChannelHub()
        let clock = SystemCallClock()
        let network = InMemorySignalNetwork(clock: clock)
        let apis = [CallApiImpl(), CallApiImpl()]
        let engines = [WebRTCEngine(transport: hub, label: "caller"), WebRTCEngine(transport: hub, label: "callee")]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("call-\(UUID().uuidString).png").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let calleeView = FrameSnapshotCanvas(path: path)
        // Held here: the API holds its listeners weakly, and without one saying no the callee would join on ring.
        let listeners = [RecordingCallListener(canJoinRtcOnCalling: false), .init(canJoinRtcOnCalling: false)]
        for (index, api) in apis.enumerated() {
            let uid = UInt(index + 1)
            api.addListener(listener: listeners[index])
            api.initialize(
                config: CallConfig(
                    appId: "test", userId: uid, rtcEngine: engines[index], signalClient: network.client(userId: uid),
                    clock: clock))
            try await api.prepareForCall(
                prepareConfig: PrepareConfig(
                    roomId: "room-\(uid)-\(type)", rtcToken: "token-\(uid)", localView: TestCanvas(),
                    remoteView: index == 1 ? calleeView : TestCanvas(), callTimeoutMillisecond: 30_000))
        }
        let (caller, callee) = (apis[0], apis[1])
        let callerStates = caller.stateChanges
        let calleeStates = callee.stateChanges

        try await caller.call(remoteUserId: 2, callType: type)
        try await within(20, "the callee ringing") {
            for await change in calleeStates where change.state == .calling { return }
        }
        let accepted = Date()
        try await callee.accept(remoteUserId: 1)
        let calleeConnected = try await within(20, "the callee connected") {
            for await change in calleeStates where change.state == .connected { return change }
            throw TimedOut(what: "callee states ended")
        }
        let callerConnected = try await within(20, "the caller connected") {
            for await change in callerStates where change.state == .connected { return change }
            throw TimedOut(what: "caller states ended")
        }
        print("\(type) call: accept to both sides connected: \(Int(Date().timeIntervalSince(accepted) * 1000)) ms")
        #expect(callerConnected.reason == .recvRemoteFirstFrame)
        #expect(calleeConnected.reason == .recvRemoteFirstFrame)
        if type == .video {
            #expect(try await within(20, "the callee's snapshot") { await calleeView.waitUntilSaved() })
            let image = try #require(PNGCodec.decode(path: path))
            #expect(image.width == 320 && image.height == 240)
        }

        try await caller.hangup(remoteUserId: 2)
        #expect(caller.state == .prepared)
        for api in apis { await api.deinitialize() }
    }
}
