import CallAPIServer
import Logging

/// Our signaling server, in this process, on an ephemeral loopback port, with limits raised so the benchmark
/// measures the relay rather than the per-session rate limiter.
final class BenchServer: Sendable {
    private let local: LocalSignalServer
    var server: SignalServer { local.server }
    var port: Int { local.port }

    var url: String { "ws://127.0.0.1:\(port)/v1/signal" }

    static func start() async throws -> BenchServer {
        var configuration = SignalServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.signingKey = .hs256(secret: "bench-secret-0123456789-0123456789-abcdef")
        configuration.adminKey = nil
        configuration.drainSeconds = 2
        configuration.limits = benchLimits
        var logger = Logger(label: "callapi.bench.server")
        logger.logLevel = .critical
        return BenchServer(local: try await LocalSignalServer.start(configuration: configuration, logger: logger))
    }

    /// The default limits, except the per-session frame rate, which a load generator would hit at once.
    static var benchLimits: HubLimits {
        var limits = HubLimits()
        limits.ratePerSecond = 10_000_000
        limits.burst = 10_000_000
        limits.maxSessionsPerUser = 5
        return limits
    }

    private init(local: LocalSignalServer) {
        self.local = local
    }

    func token(_ user: String) async throws -> String {
        try await server.authority.issue(userId: user, ttlSeconds: 3600).token
    }

    /// Graceful shutdown, waiting until the server has stopped.
    func stop() async {
        await local.stop()
    }
}
