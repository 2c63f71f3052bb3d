import ArgumentParser

/// `callapi-bench calls`: sustained full calls per second and the setup latencies.
struct CallsBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calls",
        abstract: "Full call flows between user pairs through the server, simulated media: calls/s and setup times.")

    @Option(help: "Caller/callee pairs calling back to back.") var pairs = 100
    @Option(help: "Seconds to run.") var seconds = 5.0
    @OptionGroup var peer: BenchPeerOptions
    @Flag(help: "Keep what each endpoint saw, and print it for every failed call (costs the clients a little).")
    var traceFailures = false

    func run() async throws {
        guard pairs > 0, pairs <= 5_000, seconds > 0, seconds <= 120 else {
            throw ValidationError("pairs in 1...5000 and seconds in (0, 120]")
        }
        var settings = CallsBench.Settings()
        settings.pairs = pairs
        settings.seconds = seconds
        settings.peer = peer.settings
        settings.traceFailures = traceFailures
        let report = try await CallsBench(settings: settings).run { BenchOutput.progress($0) }
        for failure in report.failures { BenchOutput.progress("failed: \(failure)") }
        print(CallsReportTable.render(report))
        print(BenchJSONLine.render(report))
    }
}

/// The calls report as a markdown table.
enum CallsReportTable {
    static func render(_ report: CallsBench.Report) -> String {
        var text = "### Calls, \(report.peerTitle) (\(report.pairs) pairs, simulated media, zero latency)\n\n"
        text +=
            "\(report.completed) calls completed in \(report.seconds) s: **\(Int(report.callsPerSecond)) calls/s**"
            + " (\(report.failed) failed)\n\n"
        var table = MarkdownTable(["interval", "count", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs"])
        let f = { (value: Double) in MarkdownTable.format(value) }
        for (name, summary) in [
            ("call() → callee ringing", report.callToRinging), ("accept() → both connected", report.acceptToConnected),
            ("call() → both connected (setup)", report.setup), ("hangup() → both prepared", report.hangup),
        ] {
            table.add([
                name, "\(summary.count)", f(summary.p50), f(summary.p90), f(summary.p99), f(summary.p999),
                f(summary.max),
            ])
        }
        return text + table.render() + "\n"
    }
}
