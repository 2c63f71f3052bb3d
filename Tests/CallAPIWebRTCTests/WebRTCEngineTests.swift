import CallAPI
import Foundation
import Testing

@testable import CallAPIWebRTC

/// Real media between two engines in this process. Serialized: each test runs pipelines of its own, and
/// the leak test counts the process's threads and file descriptors.
///
@Suite("WebRTC engine over an in-process hub", .serialized)
struct WebRTCEngineTests {
    init() {
        #expect(WebRTCEngine.missingElements == [])
    }

    @Test func videoChannelDecodesARealFrameOnBothSides() async throws {
        let pair = EnginePair()
        let started = Date()
        pair.a.joinChannel("video", token: "t", uid: 1, media: .call(.video))
        pair.b.joinChannel("video", token: "t", uid: 2, media: .call(.video))
        try await pair.eventsA.wait(for: .localJoined(channel: "video", uid: 1))
        try await pair.eventsA.wait(for: .remoteJoined(channel: "video", uid: 2))
        try await pair.eventsB.wait(for: .remoteJoined(channel: "video", uid: 1))
        try await pair.eventsA.wait(for: .remoteFirstVideoFrameDecoded(channel: "video", uid: 2))
        try await pair.eventsB.wait(for: .remoteFirstVideoFrameDecoded(channel: "video", uid: 1))
        print("join to first decoded video frame on both sides: \(Int(Date().timeIntervalSince(started) * 1000)) ms")
        try await pair.eventsA.wait(for: .localFirstVideoFramePublished(channel: "video"))
        try await pair.eventsA.wait(for: .localFirstAudioFramePublished(channel: "video"))
        try await pair.leave("video")
        #expect(pair.hub.members(of: "video") == [])
    }

    @Test func audioChannelDecodesARealOpusFrame() async throws {
        let pair = EnginePair()
        let started = Date()
        pair.a.joinChannel("audio", token: "t", uid: 1, media: .call(.audio))
        pair.b.joinChannel("audio", token: "t", uid: 2, media: .call(.audio))
        try await pair.eventsA.wait(for: .remoteFirstAudioFrameDecoded(channel: "audio", uid: 2))
        try await pair.eventsB.wait(for: .remoteFirstAudioFrameDecoded(channel: "audio", uid: 1))
        print("join to first decoded audio frame on both sides: \(Int(Date().timeIntervalSince(started) * 1000)) ms")
        try await pair.leave("audio")
        // Nobody published a camera, so nothing was decoded as video.
        #expect(!pair.eventsA.events.contains(.remoteFirstVideoFrameDecoded(channel: "audio", uid: 2)))
        #expect(!pair.eventsB.events.contains(.remoteFirstVideoFrameDecoded(channel: "audio", uid: 1)))
    }

    @Test func firstRemoteFrameIsSavedAsThePatternPNG() async throws {
        let pair = EnginePair()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("snapshot-\(UUID().uuidString).png")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let canvas = FrameSnapshotCanvas(path: path)
        pair.b.setRemoteCanvas(canvas, uid: 1)
        pair.a.joinChannel("snap", token: "t", uid: 1, media: .call(.video))
        pair.b.joinChannel("snap", token: "t", uid: 2, media: .call(.video))
        let saved = try await within(20, "the snapshot") { await canvas.waitUntilSaved() }
        #expect(saved)
        try await pair.leave("snap")
        let image = try #require(PNGCodec.decode(path: path))
        #expect(image.width == 320)
        #expect(image.height == 240)
        #expect(image.lumaVariance > 100)
        #expect(image.distinctColours >= 7)  // SMPTE bars: at least the seven top bars
    }

    @Test func peerLeavingIsReportedAsRemoteLeft() async throws {
        let pair = EnginePair()
        pair.a.joinChannel("leave", token: "t", uid: 1, media: .call(.audio))
        pair.b.joinChannel("leave", token: "t", uid: 2, media: .call(.audio))
        try await pair.eventsA.wait(for: .remoteJoined(channel: "leave", uid: 2))
        pair.b.leaveChannel()
        try await pair.eventsB.wait(for: .localLeft(channel: "leave"))
        try await pair.eventsA.wait(for: .remoteLeft(channel: "leave", uid: 2, reason: 0))

        let again = EventRecorder(pair.a)  // takes over a's events
        pair.b.joinChannel("leave", token: "t", uid: 2, media: .call(.audio))
        try await again.wait(for: .remoteJoined(channel: "leave", uid: 2))
        pair.hub.drop(uid: 2, from: "leave")
        try await again.wait(for: .remoteLeft(channel: "leave", uid: 2, reason: 1))
        pair.a.leaveChannel()
        pair.b.leaveChannel()
        try await again.wait(for: .localLeft(channel: "leave"))
        try await pair.eventsB.wait(for: .localLeft(channel: "leave"))
    }

    /// Join and leave return the process to the threads and file descriptors it had before the join.
    /// GStreamer's one-time global set-up happens in a warm-up round first. Other suites may run in
    /// parallel and open files or start threads meanwhile, so a round that does not come back is tried
    /// again (up to three rounds): a leak in the engine fails every round.
    @Test func leavingReleasesThreadsAndFileDescriptors() async throws {
        let pair = EnginePair()
        try await connectAndLeave(pair, channel: "warm-up")
        var report = ""
        var released = false
        for round in 1...3 {
            GStreamerRuntime.stopIdleThreads()
            let fds = ProcessResources.openFileDescriptors
            let threads = ProcessResources.threads
            let fdTargets = ProcessResources.fileDescriptorTargets
            let threadNames = ProcessResources.threadNames
            try await connectAndLeave(pair, channel: "measured-\(round)")
            let back = await eventually(20) {
                GStreamerRuntime.stopIdleThreads()
                return ProcessResources.openFileDescriptors <= fds && ProcessResources.threads <= threads
            }
            report +=
                "round \(round): fds \(fds) -> \(ProcessResources.openFileDescriptors), "
                + "threads \(threads) -> \(ProcessResources.threads)\n"
            if !back {
                let newFds = ProcessResources.fileDescriptorTargets.filter { fdTargets[$0.key] != $0.value }
                var names = ProcessResources.threadNames
                for name in threadNames {
                    if let index = names.firstIndex(of: name) { names.remove(at: index) }
                }
                report += "  new fds: \(Set(newFds.values).sorted()) (\(newFds.count))\n  new threads: \(names)\n"
            }
            if back {
                released = true
                break
            }
        }
        print(report, terminator: "")
        #expect(released, "\(report)")
    }

    private func connectAndLeave(_ pair: EnginePair, channel: String) async throws {
        pair.a.joinChannel(channel, token: "t", uid: 1, media: .call(.video))
        pair.b.joinChannel(channel, token: "t", uid: 2, media: .call(.video))
        try await pair.eventsA.wait(for: .remoteFirstVideoFrameDecoded(channel: channel, uid: 2))
        try await pair.eventsB.wait(for: .remoteFirstVideoFrameDecoded(channel: channel, uid: 1))
        try await pair.eventsA.wait(for: .remoteFirstAudioFrameDecoded(channel: channel, uid: 2))
        try await pair.leave(channel)
    }
}
