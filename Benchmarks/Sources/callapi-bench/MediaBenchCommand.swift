import ArgumentParser
import CallAPI

/// `callapi-bench media`: accept() → both connected with real media, callee joining on ring vs on accept.
struct MediaBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "media",
        abstract: "Real media (WebRTC): accept() to both sides connected, joining on ring versus on accept.",
        discussion: """
            Two users in this process call each other through our server on loopback (signaling and RTC \
            channels), with WebRTC engines sending VP8 and Opus test sources peer to peer. Linux with GStreamer.
            """)

    @Option(help: "Calls per mode.") var calls = 10
    @Option(name: .customLong("ring-ms"), help: "How long each call rings before it is accepted.") var ringMillis =
        1_500
    @Flag(help: "Audio calls instead of video calls.") var audio = false

    func run() async throws {
        guard (1...1_000).contains(calls) else { throw ValidationError("calls in 1...1000") }
        guard (0...30_000).contains(ringMillis) else { throw ValidationError("ring-ms in 0...30000") }
        let bench = MediaBench(settings: .init(calls: calls, ringMillis: ringMillis, type: audio ? .audio : .video))
        let report = try await bench.run()
        print(MediaReportTable.render(report))
        print(BenchJSONLine.render(report))
    }
}

/// The media report as a markdown table.
enum MediaReportTable {
    static func render(_ report: MediaBench.Report) -> String {
        var table = MarkdownTable(["callee joins", "calls", "failed", "p50 ms", "p90 ms", "max ms"])
        for mode in report.modes {
            let summary = mode.acceptToConnected
            table.add([
                mode.joinOnRing ? "on ring" : "on accept", "\(summary.count)", "\(mode.failed)",
                MarkdownTable.format(summary.p50 / 1000), MarkdownTable.format(summary.p90 / 1000),
                MarkdownTable.format(summary.max / 1000),
            ])
        }
        return "### Real media: accept() → both sides connected (\(report.type), ring \(report.ringMillis) ms)\n\n"
            + table.render()
    }
}
