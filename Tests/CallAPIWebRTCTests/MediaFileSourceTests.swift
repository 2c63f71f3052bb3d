import CallAPI
import Foundation
import Testing

@testable import CallAPIWebRTC

extension WebRTCEngineTests {
    /// A WebM file (VP8 + Opus, 3 s) made with gst-launch-1.0; `nil` when the tool is not installed.
    static func makeMediaFile() throws -> String? {
        let tool = "/usr/bin/gst-launch-1.0"
        guard FileManager.default.isExecutableFile(atPath: tool) else { return nil }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("clip-\(UUID().uuidString).webm").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments =
            """
            -q webmmux name=mux ! filesink location=\(path) \
            videotestsrc num-buffers=90 pattern=ball ! video/x-raw,width=320,height=240,framerate=30/1 ! vp8enc ! mux. \
            audiotestsrc num-buffers=150 ! audioconvert ! opusenc ! mux.
            """.split(separator: " ").map(String.init)
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? path : nil
    }

    @Test func aMediaFileIsSentInsteadOfTheTestSources() async throws {
        let file = try #require(try Self.makeMediaFile(), "gst-launch-1.0 (gstreamer1.0-tools) makes the clip")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let hub = InProcessChannelHub()
        let sender = WebRTCEngine(
            transport: hub, sources: WebRTCMediaSources(video: .file(file), audio: .file(file)), label: "file")
        let receiver = WebRTCEngine(transport: hub, label: "receiver")
        let events = EventRecorder(receiver)
        let sent = EventRecorder(sender)
        sender.joinChannel("clip", token: "t", uid: 1, media: .call(.video))
        receiver.joinChannel("clip", token: "t", uid: 2, media: .call(.video))
        try await events.wait(for: .remoteFirstVideoFrameDecoded(channel: "clip", uid: 1))
        try await events.wait(for: .remoteFirstAudioFrameDecoded(channel: "clip", uid: 1))
        sender.leaveChannel()
        receiver.leaveChannel()
        try await sent.wait(for: .localLeft(channel: "clip"))
        try await events.wait(for: .localLeft(channel: "clip"))
    }
}
