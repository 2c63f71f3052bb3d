import ArgumentParser
import CallAPIMachineBench

/// `callapi-bench machine`: the state machine alone, time per handled input and per full call.
struct MachineBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "machine",
        abstract: "The CallAPI state machine alone: time per handled input and per full call.")

    @Option(help: "Full calls to run.") var calls = 100_000

    func run() async throws {
        guard calls > 0, calls <= 10_000_000 else { throw ValidationError("calls in 1...10000000") }
        // A short warm-up, so caches and the allocator are in their steady state.
        _ = MachineBench(settings: .init(calls: min(calls, 1_000))).run()
        let report = MachineBench(settings: .init(calls: calls)).run()
        print(MachineReportTable.render(report))
        print(BenchJSONLine.render(report))
    }
}

/// The machine report as a markdown table.
enum MachineReportTable {
    static func render(_ report: MachineBench.Report) -> String {
        var table = MarkdownTable(["calls", "failed", "inputs/call", "ns/input", "µs/call", "calls/s"])
        table.add([
            "\(report.calls)", "\(report.failedCalls)", MarkdownTable.format(report.inputsPerCall),
            MarkdownTable.format(report.nanosPerInput, decimals: 0),
            MarkdownTable.format(report.microsPerCall, decimals: 2),
            MarkdownTable.format(report.callsPerSecond, decimals: 0),
        ])
        return "### State machine alone (two machines, one thread)\n\n" + table.render()
            + "\n\nAllocations per call: `callapi-allocs` (the same calls under ordo-one's malloc interposer).\n"
    }
}
