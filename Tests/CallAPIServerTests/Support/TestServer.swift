import CallAPIServer
import CallAPIServerCore
import Logging
import NIOConcurrencyHelpers

/// A wall clock tests can set and move. Its sleepers wake when it is moved past their deadlines, never on their
/// own.
final class TestClock: SignalServerClock {
    private struct Sleeper {
        var deadline: Int64
        var continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var millis: Int64
        var sleepers: [Int: Sleeper] = [:]
        var nextSleeper = 0
        var deadlineWaiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state: NIOLockedValueBox<State>

    init(_ start: Int64 = 1_800_000_000_000) { state = .init(State(millis: start)) }
    func nowMillis() -> Int64 { state.withLockedValue { $0.millis } }

    func advance(seconds: Double) { advance(millis: Int64(seconds * 1000)) }

    /// Moves the clock on and wakes the sleepers whose deadlines it reached.
    func advance(millis: Int64) {
        let woken: [CheckedContinuation<Void, any Error>] = state.withLockedValue { state in
            state.millis += millis
            let due = state.sleepers.filter { $0.value.deadline <= state.millis }
            for key in due.keys { state.sleepers[key] = nil }
            return due.sorted { $0.key < $1.key }.map(\.value.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// The deadlines of the sleepers waiting now, earliest first.
    var sleeperDeadlines: [Int64] { state.withLockedValue { $0.sleepers.values.map(\.deadline).sorted() } }

    /// Returns once someone sleeps on this clock (at once if someone does now).
    func waitForSleeper() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLockedValue { state in
                if !state.sleepers.isEmpty { return true }
                state.deadlineWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    func sleep(untilMillis deadline: Int64) async throws {
        let key = state.withLockedValue { state in
            state.nextSleeper += 1
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Cancelled before it was registered: `onCancel` found nothing to resume, so end here.
                let (now, waiters): (Bool, [CheckedContinuation<Void, Never>]) = state.withLockedValue { state in
                    if deadline <= state.millis || Task.isCancelled { return (true, []) }
                    state.sleepers[key] = Sleeper(deadline: deadline, continuation: continuation)
                    defer { state.deadlineWaiters = [] }
                    return (false, state.deadlineWaiters)
                }
                if now {
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
                for waiter in waiters { waiter.resume() }
            }
        } onCancel: {
            let sleeper = state.withLockedValue { $0.sleepers.removeValue(forKey: key) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
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
