import CallAPI
import CallAPISignalProtocol
import Foundation
import Testing

@testable import CallAPIWebRTC

/// The showroom-to-1v1 scenario with real media: a host streams into a showroom, takes a call, and the
/// showroom's viewer sees the pause and the return.
@Suite("Showroom over WebRTC", .serialized)
struct ShowroomOverWebRTCTests {
    init() {
        #expect(WebRTCEngine.missingElements == [])
    }

    /// Whether `engine`'s secondary `channel` sends video to `uid` now (its send valve is open).
    private func sendsVideo(_ engine: WebRTCEngine, in channel: String, to uid: UInt) -> Bool? {
        engine.secondaries.withLock { $0[channel] }?.state.withLock {
            $0.session?.peers[ChannelMember(uid: uid)]?.sendingVideo
        }
    }

    @Test func hostStopsPublishingInTheShowroomDuringTheCallAndResumesAfter() async throws {
        let hub = InProcessChannelHub()
        let (host, caller, viewer) = (
            WebRTCEngine(transport: hub, label: "host"), WebRTCEngine(transport: hub, label: "caller"),
            WebRTCEngine(transport: hub, label: "viewer")
        )
        let (hostEvents, callerEvents, viewerEvents) = (
            EventRecorder(host), EventRecorder(caller), EventRecorder(viewer)
        )
        let showroom = Showroom(engine: host, channel: "show", token: "t", uid: 1)
        showroom.open()
        viewer.joinChannel("show", token: "t", uid: 3, media: .audience)
        try await viewerEvents.wait(for: .remoteFirstVideoFrameDecoded(channel: "show", uid: 1))
        try await viewerEvents.wait(for: .remoteFirstAudioFrameDecoded(channel: "show", uid: 1))
        #expect(sendsVideo(host, in: "show", to: 3) == true)

        host.joinChannel("call", token: "t", uid: 1, media: .call(.video))
        caller.joinChannel("call", token: "t", uid: 2, media: .call(.video))
        try await hostEvents.wait(for: .remoteFirstVideoFrameDecoded(channel: "call", uid: 2))
        try await callerEvents.wait(for: .remoteFirstVideoFrameDecoded(channel: "call", uid: 1))
        showroom.onCallStateChanged(
            with: .connected, stateReason: .recvRemoteFirstFrame, eventReason: "", eventInfo: [:])
        try await viewerEvents.wait(for: .remotePublishingChanged(channel: "show", uid: 1, audio: false, video: false))
        #expect(sendsVideo(host, in: "show", to: 3) == false, "the send valve is closed")
        #expect(hub.members(of: "show") == [1, 3], "the host stays in the showroom")
        #expect(!viewerEvents.events.contains { if case .remoteLeft = $0 { true } else { false } })

        host.leaveChannel()
        caller.leaveChannel()
        try await hostEvents.wait(for: .localLeft(channel: "call"))
        showroom.onCallStateChanged(with: .prepared, stateReason: .remoteHangup, eventReason: "", eventInfo: [:])
        try await viewerEvents.wait(for: .remotePublishingChanged(channel: "show", uid: 1, audio: true, video: true))
        #expect(sendsVideo(host, in: "show", to: 3) == true)

        showroom.close()
        try await hostEvents.wait(for: .localLeft(channel: "show"))
        try await viewerEvents.wait(for: .remoteLeft(channel: "show", uid: 1, reason: 0))
        viewer.leaveChannel()
        try await viewerEvents.wait(for: .localLeft(channel: "show"))
        #expect(hub.members(of: "show") == [])
    }

    @Test func joiningAChannelTheEngineIsInFails() async throws {
        let hub = InProcessChannelHub()
        let engine = WebRTCEngine(transport: hub, label: "twice")
        let events = EventRecorder(engine)
        engine.joinChannel("room", token: "t", uid: 1, media: .call(.audio))
        engine.joinSecondaryChannel("room", token: "t", uid: 1, media: .broadcast)
        let code = WebRTCEngineError.Code.alreadyInChannel.rawValue
        try await events.wait(for: .joinFailed(channel: "room", code: code, message: "already in channel room"))
        engine.leaveChannel()
        try await events.wait(for: .localLeft(channel: "room"))
    }
}
