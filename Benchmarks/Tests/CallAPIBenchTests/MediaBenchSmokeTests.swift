import Testing

@testable import callapi_bench

/// `callapi-bench media` at its smallest: one real-media call per mode through the in-process server.
/// Timings are never asserted; the report has both modes, each with its call measured.
@Suite("callapi-bench media smoke", .enabled(if: MediaBench.webrtcUnavailableReason == nil))
struct MediaBenchSmokeTests {
    @Test func mediaReportHasBothJoinModesWithTheirCall() async throws {
        let report = try await MediaBench(settings: .init(calls: 1, ringMillis: 600, type: .video)).run()
        #expect(report.modes.map(\.joinOnRing) == [true, false])
        for mode in report.modes {
            #expect(mode.failed == 0)
            #expect(mode.acceptToConnected.count == 1)
            #expect(mode.acceptToConnected.p50 > 0)
        }
        #expect(MediaReportTable.render(report).contains("| on ring"))
        #expect(BenchJSONLine.render(report).hasPrefix("{\"bench\":\"media\""))
    }
}
