import CallAPIServer
import Logging

/// A real server on an ephemeral loopback port, run as a service in this process: the one wrapper the tests, the
/// benchmarks and the media tests start servers with.
public final class TestServer: Sendable {
    /// The HS256 secret the server's tokens are signed with, unless `configure` changes the key.
    public static let signingSecret = "test-secret-0123456789-0123456789-abcdef"
    /// The admin key the server starts with by default.
    public static let defaultAdminKey = "test-admin-key"

    private let local: LocalSignalServer
    /// The server itself.
    public var server: SignalServer { local.server }
    /// The port it listens on.
    public var port: Int { local.port }

    /// The signaling endpoint's URL.
    public var url: String { "ws://127.0.0.1:\(port)/v1/signal" }
    /// The WebSocket base URL (the endpoints' paths follow it).
    public var baseURL: String { "ws://127.0.0.1:\(port)" }
    /// The HTTP base URL (admin and API endpoints).
    public var httpBase: String { "http://127.0.0.1:\(port)" }

    /// Starts a server on loopback and returns once it listens (or fails with ``TimedOut`` after 10 s); `port` 0 picks a free one. A
    /// `nil` tick interval means time moves only by ``tick()``. `configure` changes the configuration last.
    public static func start(
        port: Int = 0, clock: any SignalServerClock = SystemServerClock(), tickIntervalMillis: Int64? = nil,
        adminKey: String? = defaultAdminKey, configure: (inout SignalServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        var configuration = SignalServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = port
        configuration.signingKey = .hs256(secret: signingSecret)
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

    /// A login token for `user`, valid for `ttl` seconds.
    public func token(_ user: String, ttl: Int = 3600) async throws -> String {
        try await server.authority.issue(userId: user, ttlSeconds: ttl).token
    }

    /// Runs the server's periodic work once, at its clock's time.
    public func tick() async { await server.tick() }

    /// Graceful shutdown, waiting (at most 10 s) until the server has stopped.
    public func stop() async throws {
        _ = try? await withTimeout(10, "the server to stop") { [local] in await local.stop() }
    }
}

/// Why a wait gave up (``withTimeout(_:_:_:)``).
public struct TimedOut: Error, CustomStringConvertible {
    /// What it waited for.
    public var what: String
    public var description: String { "timed out waiting for \(what)" }

    /// A wait for `what` that gave up.
    public init(what: String) { self.what = what }
}

/// Runs `operation`, failing with ``TimedOut`` if it takes longer than `seconds`.
public func withTimeout<T: Sendable>(
    _ seconds: Double = 5, _ what: String = "an event", _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            throw TimedOut(what: what)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
