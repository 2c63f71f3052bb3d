import Foundation
import NIOCore
import NIOPosix

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `callapi serve` process on a loopback port, for tests that kill a server the way an operator's machine can
/// (SIGKILL) rather than stop one in process. Its output is discarded.
public final class ServeProcess {
    /// The built `callapi` beside the test bundle, if it was built.
    public static let executable: String? = {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [directory, directory.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("callapi").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }()

    public let port: Int
    private let process: Process

    /// `ws://127.0.0.1:<port>`.
    public var baseURL: String { "ws://127.0.0.1:\(port)" }

    /// Starts `callapi serve` with `arguments` and `--port` a free loopback port (`{port}` in an argument is replaced
    /// by it); returns once it answers `/healthz` with 200 (a cluster's node: once it is a member), or fails after
    /// `seconds`.
    public static func start(_ arguments: [String], within seconds: Double = 20) async throws -> ServeProcess {
        guard let executable else { throw ServeProcessError("the callapi executable is not built") }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments =
            ["serve", "--port", "\(port)"] + arguments.map { $0.replacingOccurrences(of: "{port}", with: "\(port)") }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let server = ServeProcess(port: port, process: process)
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            guard process.isRunning else {
                throw ServeProcessError("callapi serve exited (\(process.terminationStatus))")
            }
            if await server.healthy() { return server }
            try await Task.sleep(for: .milliseconds(50))
        }
        server.kill()
        throw ServeProcessError("callapi serve did not answer /healthz with 200 within \(seconds) s")
    }

    private init(port: Int, process: Process) {
        self.port = port
        self.process = process
    }

    deinit { kill() }

    /// Whether `/healthz` answers 200 now.
    public func healthy() async -> Bool {
        guard let url = URL(string: "http://127.0.0.1:\(port)/healthz") else { return false }
        let response = try? await URLSession.shared.data(from: url).1
        return (response as? HTTPURLResponse)?.statusCode == 200
    }

    /// SIGKILL: the process ends at once, telling nobody.
    public func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, then waits for the process to end (its drain included).
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

/// Why a ``ServeProcess`` could not be started.
public struct ServeProcessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
