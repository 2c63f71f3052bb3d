import CallAPIServer
import CallAPIServerTesting

/// Our signaling server in this process (the shared ``TestServer``), with limits raised so the benchmark measures
/// the relay rather than the per-session rate limiter.
typealias BenchServer = TestServer

extension TestServer {
    /// Starts a server for the benchmarks: no admin endpoints, ``benchLimits``.
    static func start() async throws -> TestServer {
        try await start(port: 0, adminKey: nil) { $0.limits = benchLimits }
    }

    /// The default limits, except the per-session frame rate, which a load generator would hit at once.
    static var benchLimits: HubLimits {
        var limits = HubLimits()
        limits.ratePerSecond = 10_000_000
        limits.burst = 10_000_000
        limits.maxSessionsPerUser = 5
        return limits
    }
}
