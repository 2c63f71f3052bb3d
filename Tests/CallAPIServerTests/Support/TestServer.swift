import CallAPIServer
import Logging
import NIOConcurrencyHelpers

/// A wall clock tests can set and move.
final class TestClock: SignalServerClock {
    private let millis: NIOLockedValueBox<Int64>
    init(_ start: Int64 = 1_800_000_000_000) { millis = .init(start) }
    func nowMillis() -> Int64 { millis.withLockedValue { $0 } }
    func advance(seconds: Double) { millis.withLockedValue { $0 += Int64(seconds * 1000) } }
}

/// A real server on an ephemeral loopback port, run as a service.
final class TestServer: Sendable {
    private let local: LocalSignalServer
    var server: SignalServer { local.server }
    var port: Int { local.port }

    var url: String { "ws://127.0.0.1:\(port)/v1/signal" }
    var httpBase: String { "http://127.0.0.1:\(port)" }

    /// Starts a server; `port` 0 picks a free one. A `nil` tick interval means time moves only by ``tick()``.
    static func start(
        port: Int = 0, clock: any SignalServerClock = SystemServerClock(), tickIntervalMillis: Int64? = nil,
        adminKey: String? = "test-admin-key", configure: (inout SignalServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        var configuration = SignalServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = port
        configuration.signingKey = .hs256(secret: "test-secret-0123456789-0123456789-abcdef")
        configuration.adminKey = adminKey
        configuration.tickIntervalMillis = tickIntervalMillis
        configuration.drainSeconds = 2
        configure(&configuration)
        var logger = Logger(label: "test.server")
        logger.logLevel = .critical
        let local = try await withTimeout(10, "the server to listen") { [configuration, logger] in
            try await LocalSignalServer.start(configuration: configuration, clock: clock, logger: logger)
        }
        return TestServer(local: local)
    }

    private init(local: LocalSignalServer) {
        self.local = local
    }

    /// A login token for `user`.
    func token(_ user: String, ttl: Int = 3600) async throws -> String {
        try await server.authority.issue(userId: user, ttlSeconds: ttl).token
    }

    /// A raw socket logged in as `user`.
    func loggedIn(_ user: String) async throws -> RawSocket {
        let socket = RawSocket(url: url)
        try await socket.login(try await token(user))
        return socket
    }

    func tick() async { await server.tick() }

    /// Graceful shutdown, waiting until the server has stopped.
    func stop() async throws {
        _ = try? await withTimeout(10, "the server to stop") { [local] in await local.stop() }
    }
}
