import ArgumentParser
import Foundation

/// `callapi-bench relay`: one-way latency through our server at fixed offered loads, and the saturation point.
struct RelayBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "One-way message latency through the server at fixed loads, and the saturation point.")

    @Option(help: "Sender/receiver pairs.") var pairs = 50
    @Option(help: "Offered loads in messages per second, comma-separated.") var rates = "1000,10000,50000"
    @Option(help: "Seconds at each offered load.") var seconds = 3.0
    @Option(help: "Bytes per message.") var payloadBytes = 256
    @Option(help: "Rates stepped through to find the saturation point, comma-separated.")
    var saturationRates = "1000,2000,5000,10000,20000,30000,40000,50000,60000,80000,100000"
    @Option(help: "Seconds at each saturation step.") var saturationSeconds = 2.0
    @Flag(help: "Skip the saturation search.") var noSaturation = false
    @Option(help: "The server's process id, to report the CPU time it uses per step (Linux).") var serverPid: Int?
    @OptionGroup var peer: BenchPeerOptions

    func run() async throws {
        var settings = RelayBench.Settings()
        settings.pairs = pairs
        settings.rates = try Self.parseRates(rates)
        settings.secondsPerRate = seconds
        settings.payloadBytes = payloadBytes
        settings.saturationRates = try Self.parseRates(saturationRates)
        settings.saturationSeconds = saturationSeconds
        settings.findSaturation = !noSaturation
        settings.peer = peer.settings
        settings.serverPID = serverPid
        guard pairs > 0, seconds > 0, seconds <= 60, saturationSeconds > 0, saturationSeconds <= 60 else {
            throw ValidationError("pairs must be positive and seconds in (0, 60]")
        }
        let report = try await RelayBench(settings: settings).run { BenchOutput.progress($0) }
        print(RelayReportTable.render(report))
        print(BenchJSONLine.render(report))
    }

    static func parseRates(_ text: String) throws -> [Double] {
        let rates = text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !rates.isEmpty, rates.allSatisfy({ $0 > 0 && $0 <= 1_000_000 }) else {
            throw ValidationError("rates are positive numbers up to 1,000,000, comma-separated: \(text)")
        }
        return rates
    }
}

/// Progress lines go to standard error, so standard output holds only the table and the JSON line.
enum BenchOutput {
    static func progress(_ line: String) {
        FileHandle.standardError.write(Data("bench: \(line)\n".utf8))
    }
}

/// The relay report as a markdown table.
enum RelayReportTable {
    static func render(_ report: RelayBench.Report) -> String {
        var table = MarkdownTable([
            "offered msg/s", "achieved msg/s", "sent", "delivered", "lost", "status", "p50 µs", "p90 µs", "p99 µs",
            "p99.9 µs", "max µs",
            "ack p50 µs", "ack p99 µs", "bench CPU µs/msg", "server CPU µs/msg",
        ])
        for step in report.steps { table.add(row(step)) }
        var text =
            "### Relay, \(report.peerTitle) (\(report.pairs) pairs, \(report.payloadBytes)-byte messages, one-way)\n\n"
        text += table.render() + "\n"
        if !report.saturationSteps.isEmpty {
            var steps = MarkdownTable(table.headers)
            for step in report.saturationSteps { steps.add(row(step)) }
            text += "\nSaturation search (p99 under \(Int(report.saturationP99Micros / 1000)) ms):\n\n"
            text += steps.render() + "\n"
            let reached = report.saturationRate.map { "\(Int($0)) msg/s" } ?? "none of the stepped rates"
            text += "\nSaturation point: \(reached)\n"
        }
        return text
    }

    static func row(_ step: RelayBench.Step) -> [String] {
        let f = { (value: Double) in MarkdownTable.format(value) }
        return [
            "\(Int(step.offeredRate))", "\(Int(step.achievedRate))", "\(step.sent)", "\(step.delivered)",
            "\(step.lost)",
            step.drained ? (step.failed > 0 ? "\(step.failed) sends failed" : "ok") : "saturated: backlog",
            f(step.oneWay.p50), f(step.oneWay.p90), f(step.oneWay.p99), f(step.oneWay.p999), f(step.oneWay.max),
            f(step.ack.p50), f(step.ack.p99), perMessage(step.benchCPU, step), perMessage(step.serverCPU, step),
        ]
    }

    /// CPU time (user + system) per delivered message, or "—" when not read.
    static func perMessage(_ cpu: ProcessCPU?, _ step: RelayBench.Step) -> String {
        guard let cpu, step.delivered > 0 else { return "—" }
        return MarkdownTable.format(cpu.totalSeconds * 1e6 / Double(step.delivered))
    }
}
