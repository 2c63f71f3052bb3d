import ArgumentParser
import CallAPIServer
import Foundation
import Logging

/// `callapi-bench serve`: our signaling server in a process of its own, with the limits the benches raise, on
/// loopback, until SIGTERM. The connections bench starts it as its child; scripts/bench.sh runs it like the
/// brokers. (`callapi serve` from the main package is the same server with every production setting.)
struct BenchServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Our signaling server on 127.0.0.1, for the benches.")

    @Option(help: "Port (0: any free one).") var port = 0
    @Option(help: "HS256 secret with which the bench mints its users' tokens.") var secret: String
    @Option(help: "Admin key for the HTTP admin endpoints.") var adminKey: String?
    @Option(help: "Frames per second per session.") var rate = 10_000_000.0
    @Option(help: "Frames per session in a burst.") var burst = 10_000_000
    @Option(help: "Sessions per user.") var maxSessions = 5
    @Option(help: "Seconds a shutdown waits for connections to close.") var drain = 1
    @Option(help: "trace, debug, info, notice, warning, error or critical.") var logLevel = "error"
    @Option(help: "Event loop threads (0: one per core, NIO's default).") var eventLoops = 0

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("port in 0...65535") }
        guard secret.utf8.count >= 32 else { throw ValidationError("the secret needs at least 32 bytes") }
        guard rate > 0, burst > 0, maxSessions > 0, drain >= 0 else {
            throw ValidationError("rate, burst and max-sessions must be positive, drain not negative")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level \(logLevel)") }
    }

    func run() async throws {
        var configuration = SignalServerConfiguration()
        configuration.eventLoops = eventLoops > 0 ? eventLoops : nil
        configuration.host = "127.0.0.1"
        configuration.port = port
        configuration.signingKey = .hs256(secret: secret)
        configuration.adminKey = adminKey
        configuration.drainSeconds = drain
        configuration.limits.ratePerSecond = rate
        configuration.limits.burst = burst
        configuration.limits.maxSessionsPerUser = maxSessions
        var logger = Logger(label: "callapi.bench.serve")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .error
        let server = try await LocalSignalServer.start(configuration: configuration, logger: logger)
        print("callapi-bench serve: listening on ws://127.0.0.1:\(server.port)/v1/signal")
        fflush(nil)  // every stream: the parent reads the line above
        // SIGTERM's default action ends the process; until then the server runs.
        while true { try await Task.sleep(for: .seconds(3_600)) }
    }
}
