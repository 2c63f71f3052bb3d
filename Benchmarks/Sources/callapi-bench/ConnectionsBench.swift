import CallAPI
import CallAPIServer
import CallAPISignalClient
import Foundation
import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#endif

/// N idle, logged-in ``SignalClient`` connections to our server running as a child process (`callapi serve`), so
/// the server's memory is read from its own `/proc/<pid>/status` with no client in it.
struct ConnectionsBench {
    struct Settings: Sendable {
        var count = 10_000
        /// Logins in flight at once.
        var concurrency = 50
        /// Connections made before the baseline is read, so pools and caches are already warm.
        var warmup = 100
        /// Seconds to let the server settle before reading its memory.
        var settleSeconds = 2.0
        /// Seconds over which the CPU that idle connections cost is read, after the memory: by default the server's
        /// ping sweep interval (30 s), which is two of the client's ping intervals (15 s), so the window holds what
        /// an idle connection does on average. A shorter window reads zero or several times the average,
        /// depending on whether the pings of the first connections made fall in it.
        var idleSeconds = 30.0
    }

    struct Report: Codable, Sendable {
        var bench = "connections"
        var peer = "ours"
        var count: Int
        var connected: Int
        var failed: Int
        var connectSeconds: Double
        var connectionsPerSecond: Double
        var serverBaselineRSSKiB: Int
        var serverRSSKiB: Int
        /// (RSS with every connection − baseline) / connections, in bytes.
        var serverBytesPerConnection: Int
        var fileDescriptorLimit: Int
        /// CPU (user + system) while every connection is idle, per connection and second, in microseconds: the
        /// server's, and this process's (every client's timers and pings). Nil where /proc cannot be read.
        var serverIdleCPUMicros: Double?
        var clientIdleCPUMicros: Double?
    }

    let settings: Settings

    func run(executable: String, log: @Sendable (String) -> Void = { _ in }) async throws -> Report {
        let limit = Self.raiseFileLimit(to: UInt64(settings.count + settings.warmup) * 2 + 1_024)
        log("file descriptor limit \(limit)")
        let secret = "bench-secret-0123456789-0123456789-abcdef"
        let child = try ChildServer.start(executable: executable, secret: secret)
        defer { child.stop() }
        let port = try await child.waitForPort(seconds: 15)
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret))
        let url = "ws://127.0.0.1:\(port)/v1/signal"
        var clients: [SignalClient] = []
        defer { for client in clients { client.logout() } }

        log("warm-up: \(settings.warmup) connections")
        clients += await Self.connect(
            users: 0..<settings.warmup, url: url, authority: authority, concurrency: settings.concurrency
        ).clients
        try await Task.sleep(for: .seconds(settings.settleSeconds))
        let baseline = child.rssKiB()
        log("server RSS \(baseline) KiB; connecting \(settings.count)")
        let start = BenchClock.nanos()
        let batch = await Self.connect(
            users: settings.warmup..<(settings.warmup + settings.count), url: url, authority: authority,
            concurrency: settings.concurrency)
        let seconds = BenchClock.seconds(since: start)
        clients += batch.clients
        try await Task.sleep(for: .seconds(settings.settleSeconds))
        let after = child.rssKiB()
        log("server RSS \(after) KiB with \(batch.clients.count) more connections")
        let idle = try await Self.idleCPU(over: settings.idleSeconds, server: child.pid)
        let perConnectionSecond = 1e6 / (Double(max(clients.count, 1)) * settings.idleSeconds)
        let connected = batch.clients.count
        return Report(
            count: settings.count, connected: connected, failed: batch.failed,
            connectSeconds: (seconds * 1000).rounded() / 1000,
            connectionsPerSecond: (Double(connected) / seconds).rounded(), serverBaselineRSSKiB: baseline,
            serverRSSKiB: after, serverBytesPerConnection: connected > 0 ? (after - baseline) * 1024 / connected : 0,
            fileDescriptorLimit: Int(limit),
            serverIdleCPUMicros: idle.server.map { ($0.totalSeconds * perConnectionSecond * 100).rounded() / 100 },
            clientIdleCPUMicros: idle.clients.map { ($0.totalSeconds * perConnectionSecond * 100).rounded() / 100 })
    }

    /// The CPU the server and this process use over `seconds` in which nothing is asked of them.
    static func idleCPU(over seconds: Double, server: String) async throws -> (
        server: ProcessCPU?, clients: ProcessCPU?
    ) {
        let serverBefore = ProcessCPU.read(server)
        let clientsBefore = ProcessCPU.read("self")
        try await Task.sleep(for: .seconds(seconds))
        let serverAfter = ProcessCPU.read(server)
        let clientsAfter = ProcessCPU.read("self")
        return (
            serverBefore.flatMap { before in serverAfter?.since(before) },
            clientsBefore.flatMap { before in clientsAfter?.since(before) }
        )
    }

    /// Logs `users` in, `concurrency` at a time, each with the default configuration.
    static func connect(users: Range<Int>, url: String, authority: TokenAuthority, concurrency: Int) async
        -> (clients: [SignalClient], failed: Int)
    {
        await withTaskGroup(of: SignalClient?.self) { group in
            var clients: [SignalClient] = []
            var failed = 0
            var next = users.lowerBound
            func add() {
                let user = "\(500_000 + next)"
                next += 1
                group.addTask {
                    let configuration = SignalClientConfiguration(url: url)
                    var logger = Logger(label: "callapi.bench.idle")
                    logger.logLevel = .critical
                    let client = SignalClient(configuration: configuration, logger: logger)
                    do {
                        try await client.login(token: try await authority.issue(userId: user, ttlSeconds: 3600).token)
                        return client
                    } catch {
                        client.logout()
                        return nil
                    }
                }
            }
            while next < users.upperBound, next - users.lowerBound < concurrency { add() }
            for await client in group {
                if let client { clients.append(client) } else { failed += 1 }
                if next < users.upperBound { add() }
            }
            return (clients, failed)
        }
    }

    /// Raises the soft limit on open files towards `wanted` (up to the hard limit); returns the new soft limit.
    static func raiseFileLimit(to wanted: UInt64) -> UInt64 {
        #if canImport(Glibc)
            var limits = rlimit()
            guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return 0 }
            if UInt64(limits.rlim_cur) < wanted {
                limits.rlim_cur = min(rlim_t(wanted), limits.rlim_max)
                _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits)
                _ = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits)
            }
            return UInt64(limits.rlim_cur)
        #else
            return 0
        #endif
    }
}

/// `callapi-bench serve` (our server) as a child process on a free loopback port.
final class ChildServer: Sendable {
    private let process: Process
    private let output: NIOLockedValueBox<String>

    static func start(executable: String, secret: String) throws -> ChildServer {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            // The production defaults of `callapi serve` for the limits: idle connections are what is measured.
            "serve", "--port", "0", "--secret", secret, "--admin-key", "bench-admin-key", "--rate", "20", "--burst",
            "40", "--max-sessions", "5", "--log-level", "error", "--drain", "1",
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        let output = NIOLockedValueBox("")
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                return
            }
            let text = String(decoding: data, as: UTF8.self)
            output.withLockedValue { if $0.count < 65_536 { $0 += text } }
        }
        try process.run()
        return ChildServer(process: process, output: output)
    }

    private init(process: Process, output: NIOLockedValueBox<String>) {
        self.process = process
        self.output = output
    }

    /// The port from the server's "listening on ws://127.0.0.1:PORT/..." line.
    func waitForPort(seconds: Double) async throws -> Int {
        let deadline = BenchClock.nanos() + UInt64(seconds * 1e9)
        while BenchClock.nanos() < deadline, process.isRunning {
            let text = output.withLockedValue { $0 }
            if let range = text.range(of: "listening on ws://127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let port = Int(digits) { return port }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchError("callapi-bench serve did not start listening within \(Int(seconds)) s")
    }

    /// The server's process id, as `/proc` names it.
    var pid: String { "\(process.processIdentifier)" }

    /// The server's resident set size in KiB (`VmRSS` in /proc/<pid>/status), 0 if unreadable.
    func rssKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// SIGTERM, then SIGKILL if it is still running after five seconds.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = BenchClock.nanos() + 5_000_000_000
        while process.isRunning, BenchClock.nanos() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// A benchmark that could not run.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
