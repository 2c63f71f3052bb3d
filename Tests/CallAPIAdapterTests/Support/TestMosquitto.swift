import CallAPI
import Foundation

/// A Mosquitto of one test's own, on a free loopback port, configured like scripts/services/start-mosquitto.sh.
final class TestMosquitto: Sendable {
    let port: Int
    let configPath: String
    private let process: Locked<Process>

    private init(port: Int, configPath: String, process: Process) {
        self.port = port
        self.configPath = configPath
        self.process = Locked(process)
    }

    static func start(extra: [String] = []) throws -> TestMosquitto {
        let port = try freePort()
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("callapi-mosquitto-\(port).conf")
        let lines = [
            "listener \(port) 127.0.0.1", "allow_anonymous true", "persistence false", "max_inflight_messages 0",
            "max_queued_messages 0",
        ]
        try (lines + extra).joined(separator: "\n").appending("\n").write(to: config, atomically: true, encoding: .utf8)
        let broker = TestMosquitto(port: port, configPath: config.path, process: try launch(config: config.path))
        try broker.waitUntilListening()
        return broker
    }

    private static func launch(config: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: AdapterServices.mosquittoBinary ?? "/usr/sbin/mosquitto")
        process.arguments = ["-c", config]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Stops the broker (SIGKILL, waited for: a crash) and starts it again on the same port.
    func restart() throws {
        stop()
        let next = try Self.launch(config: configPath)
        process.withLock { $0 = next }
        try waitUntilListening()
    }

    func stop() {
        let process = process.withLock { $0 }
        guard process.isRunning else { return }
        // SIGKILL: a child started from a test thread inherits that thread's blocked signals, SIGTERM among them.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Polls the port for up to ten seconds (the broker gives no other sign).
    private func waitUntilListening() throws {
        for _ in 0..<200 {
            if Self.accepts(port: port) { return }
            usleep(50_000)
        }
        throw TimedOut(what: "mosquitto to listen on \(port)")
    }

    private static func tcpSocket() -> Int32 {
        #if canImport(Glibc)
            socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            socket(AF_INET, SOCK_STREAM, 0)
        #endif
    }

    private static func accepts(port: Int) -> Bool {
        let fd = tcpSocket()
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    /// A loopback port nothing listens on: bound, then released.
    static func freePort() throws -> Int {
        let fd = tcpSocket()
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
