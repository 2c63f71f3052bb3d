import CallAPIServerTesting
import Foundation

/// coturn (`turnserver`, Debian), run by a test inside a namespace of a ``NetworkLab``, for short-lived credentials
/// (the TURN REST API scheme: `use-auth-secret` with `secret`), UDP and TCP on port 3478 of `addresses`, no TLS.
struct TURNServer: Sendable {
    /// The `turnserver` binary `.ci/run` installs (`scripts/services/install-coturn.sh`), if given.
    static let executable: String? = {
        guard let path = ProcessInfo.processInfo.environment["CALLAPI_TEST_TURNSERVER"], !path.isEmpty,
            FileManager.default.isExecutableFile(atPath: path)
        else { return nil }
        return path
    }()

    let process: CLIProcess
    let folder: URL
    /// The shared secret, also in `secretFile` for `callapi serve --turn-secret-file`.
    let secret: String
    let secretFile: String

    /// Starts coturn in `namespace`, listening and relaying on `addresses`, and waits until its relays are ready.
    static func start(in namespace: String, addresses: [String]) async throws -> TURNServer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("turn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let secret = (0..<4).map { _ in UUID().uuidString.replacingOccurrences(of: "-", with: "") }.joined()
        var lines = addresses.flatMap { ["listening-ip=\($0)", "relay-ip=\($0)"] }
        lines += [
            "listening-port=3478", "use-auth-secret", "static-auth-secret=\(secret)", "realm=callapi.test", "no-tls",
            "no-dtls", "no-cli", "fingerprint", "no-rfc5780", "userdb=\(folder.path)/turndb",
            "log-file=\(folder.path)/turnserver.log",
            "verbose", "simple-log", "pidfile=\(folder.path)/turnserver.pid",
        ]
        // The secret stays out of argv: a 0600 file for coturn, another for the server.
        let config = folder.appendingPathComponent("turnserver.conf").path
        let secretFile = folder.appendingPathComponent("turn-secret").path
        for (path, text) in [(config, lines.joined(separator: "\n") + "\n"), (secretFile, secret + "\n")] {
            guard
                FileManager.default.createFile(
                    atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
            else { throw CocoaError(.fileWriteUnknown) }
        }
        let process = try CLIProcess(namespace: namespace, program: executable!, ["-c", config])
        let server = TURNServer(process: process, folder: folder, secret: secret, secretFile: secretFile)
        // Its log goes to a file: written to a pipe, a burst of it could stall coturn until the test read it.
        try await withTimeout(20, "coturn to start its relays") {
            while server.logged("Total General servers") == 0 { try await Task.sleep(for: .milliseconds(50)) }
        }
        return server
    }

    /// How many lines coturn has logged containing `text` (e.g. a successful `CHANNEL_BIND`).
    func logged(_ text: String) -> Int {
        // coturn names its log after the day: turnserver_<date>.log beside the configured name.
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return files.filter { $0.hasPrefix("turnserver") && $0.hasSuffix(".log") }.reduce(0) { count, name in
            let log = (try? String(contentsOfFile: folder.appendingPathComponent(name).path, encoding: .utf8)) ?? ""
            return count + log.split(separator: "\n").count { $0.contains(text) }
        }
    }

    /// Stops coturn (SIGKILL: it ignores SIGINT and SIGTERM, seen here) and removes its folder.
    func stop() async throws {
        process.kill()
        try? FileManager.default.removeItem(at: folder)
    }
}
