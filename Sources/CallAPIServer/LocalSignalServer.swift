import CallAPIServerCore
import Logging
import ServiceLifecycle

/// A ``SignalServer`` run as a service inside this process — for tests, benchmarks and apps that embed the
/// server: started with its configuration (port 0 picks a free one), stopped gracefully.
public final class LocalSignalServer: Sendable {
    public let server: SignalServer
    /// The port the server listens on.
    public let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    /// Starts a server for `configuration` and returns once it listens.
    public static func start(
        configuration: SignalServerConfiguration, clock: any SignalServerClock = SystemServerClock(),
        logger: Logger = Logger(label: "callapi.server")
    ) async throws -> LocalSignalServer {
        let server = try await SignalServer(configuration: configuration, clock: clock, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [server], logger: logger))
        let task = Task { try await group.run() }
        let port = await server.waitUntilListening()
        return LocalSignalServer(server: server, port: port, group: group, task: task)
    }

    private init(server: SignalServer, port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.server = server
        self.port = port
        self.group = group
        self.task = task
    }

    /// Graceful shutdown (clients are told, sockets drain); returns when the server has stopped.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
