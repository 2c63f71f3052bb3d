import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import Foundation
import NIOSSL
import Testing

/// The server speaks wss when given a certificate and key.
@Suite struct TLSTests {
    static let openssl = ["/usr/bin/openssl", "/bin/openssl", "/usr/local/bin/openssl"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// A self-signed certificate and key for 127.0.0.1, made with openssl.
    func makeCertificate() throws -> (cert: String, key: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "callapi-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let cert = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.openssl!)
        process.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out",
            cert,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return (cert, key)
    }

    @Test(.enabled(if: openssl != nil, "needs the openssl command to make a certificate"))
    func loginOverTLS() async throws {
        let files = try makeCertificate()
        let server = try await TestServer.start {
            $0.tls = .init(certificatePath: files.cert, privateKeyPath: files.key)
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none  // self-signed
        let socket = RawSocket(url: "wss://localhost:\(server.port)/v1/signal", tls: tls)
        let welcome = try await socket.login(try await server.token("1001"))
        #expect(welcome.userId == "1001")
        try await server.stop()
    }

    @Test(.enabled(if: openssl != nil, "needs the openssl command to make a certificate"))
    func aSignalClientLogsInOverTLSOnlyWhenItTrustsTheServersCertificate() async throws {
        let files = try makeCertificate()
        let server = try await TestServer.start {
            $0.tls = .init(certificatePath: files.cert, privateKeyPath: files.key)
        }
        var configuration = SignalClientConfiguration(url: "wss://localhost:\(server.port)")
        configuration.loginTimeoutMillis = 2_000
        configuration.backoffBaseMillis = 100
        let untrusting = SignalClient(configuration: configuration, logger: quietLogger)
        await #expect(throws: (any Error).self) { try await untrusting.login(token: try await server.token("1001")) }
        untrusting.logout()

        configuration.trustedCertificatesPEM = try String(contentsOfFile: files.cert, encoding: .utf8)
        let trusting = SignalClient(configuration: configuration, logger: quietLogger)
        try await trusting.login(token: try await server.token("1002"))
        let state = await trusting.state
        #expect({ if case .connected("1002", _) = state { true } else { false } }())
        trusting.logout()
        try await server.stop()
    }
}
