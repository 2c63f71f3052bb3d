import CallAPIMachineBench
import Testing

@testable import callapi_bench

/// Each bench's core at a tiny size: the report has the right shape. Timings are never asserted.
@Suite("callapi-bench smoke")
struct BenchSmokeTests {
    @Test func relayReportAddsUp() async throws {
        var settings = RelayBench.Settings()
        settings.pairs = 2
        settings.rates = [200]
        settings.secondsPerRate = 0.25
        settings.warmupSeconds = 0
        settings.saturationRates = [100, 200]
        settings.saturationSeconds = 0.2
        let report = try await RelayBench(settings: settings).run()
        #expect(report.steps.count == 1)
        #expect(!report.saturationSteps.isEmpty && report.saturationSteps.count <= 2)
        for step in report.steps + report.saturationSteps {
            #expect(step.sent > 0)
            #expect(step.acknowledged + step.failed <= step.sent)
            #expect(step.delivered <= step.sent)
            #expect(step.oneWay.count <= step.sent)
            #expect(step.oneWay.isOrdered)
            #expect(step.ack.isOrdered)
        }
        let table = RelayReportTable.render(report)
        #expect(table.contains("| offered msg/s"))
        #expect(BenchJSONLine.render(report).hasPrefix("{\"bench\":\"relay\""))
    }

    @Test func callsReportAddsUp() async throws {
        var settings = CallsBench.Settings()
        settings.pairs = 2
        settings.seconds = 0.5
        settings.traceFailures = true
        let report = try await CallsBench(settings: settings).run()
        #expect(report.completed > 0)
        #expect(report.failed == 0, "\(report.failures.joined(separator: "\n"))")
        #expect(report.failures.count == report.failed)
        #expect(report.setup.count == report.completed)
        #expect(report.callToRinging.count >= report.completed)
        for summary in [report.callToRinging, report.acceptToConnected, report.setup, report.hangup] {
            #expect(summary.isOrdered)
        }
        #expect(report.setup.p50 >= report.callToRinging.p50 * 0.5)
        #expect(CallsReportTable.render(report).contains("calls/s"))
    }

    @Test func machineRunsFullCalls() {
        let report = MachineBench(settings: .init(calls: 50)).run()
        #expect(report.calls == 50)
        #expect(report.failedCalls == 0)
        #expect(report.inputsPerCall > 3)
        #expect(MachineReportTable.render(report).contains("ns/input"))
    }

    @Test func markdownTableHasARuleAndAlignedRows() {
        var table = MarkdownTable(["a", "bb"])
        table.add(["100", "2"])
        let lines = table.render().split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[1].hasPrefix("|-"))
        #expect(Set(lines.map(\.count)).count == 1)
        #expect(MarkdownTable.format(1.5, decimals: 2) == "1.50")
        #expect(MarkdownTable.format(12, decimals: 0) == "12")
    }

    @Test func callsCommandTakesTheTraceFlag() throws {
        #expect(try CallsBenchCommand.parse(["--pairs", "2", "--trace-failures"]).traceFailures)
        #expect(try !CallsBenchCommand.parse([]).traceFailures)
    }

    @Test func ratesParseAndRefuseNonsense() throws {
        #expect(try RelayBenchCommand.parseRates("1000, 10000") == [1_000, 10_000])
        #expect(throws: (any Error).self) { try RelayBenchCommand.parseRates("fast") }
    }
}
