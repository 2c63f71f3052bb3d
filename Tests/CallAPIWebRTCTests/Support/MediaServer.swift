import CallAPI
import CallAPIServer
import CallAPIServerCore
import CallAPISignalClient
import Foundation
import Logging

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real `callapi serve` on a loopback port, for calls with real media between engines in this process.
final class MediaServer: Sendable {
    static let adminKey = "media-test-admin-key"
    private let local: LocalSignalServer
    var server: SignalServer { local.server }
    var port: Int { local.port }

    var baseURL: String { "ws://127.0.0.1:\(port)" }

    static func start() async throws -> MediaServer {
        var configuration = SignalServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.signingKey = .hs256(secret: "media-test-secret-0123456789-0123456789")
        configuration.adminKey = adminKey
        configuration.drainSeconds = 1
        var logger = Logger(label: "test.media-server")
        logger.logLevel = .critical
        let local = try await within(10, "the server to listen") { [configuration, logger] in
            try await LocalSignalServer.start(configuration: configuration, logger: logger)
        }
        return MediaServer(local: local)
    }

    private init(local: LocalSignalServer) {
        self.local = local
    }

    /// Per-call RTC tokens, as an app's business server would mint them.
    var tokenProvider: RTCTokenProvider {
        { [server] channel, uid in
            try await server.authority.issue(userId: String(uid), ttlSeconds: 600, channel: channel).token
        }
    }

    /// A signaling client logged in as `user`.
    func signalClient(_ user: UInt) async throws -> SignalClient {
        var logger = Logger(label: "test.signal")
        logger.logLevel = .critical
        let client = SignalClient(configuration: .init(url: baseURL), logger: logger)
        try await client.login(token: try await server.authority.issue(userId: String(user), ttlSeconds: 600).token)
        return client
    }

    /// Kicks `uid` from `channel` through the admin endpoint; the HTTP status and body.
    func kick(_ uid: UInt, from channel: String, barSeconds: Int) async throws -> (Int, String) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v1/channels/\(channel)/kick")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(Self.adminKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"uid":\#(uid),"barSeconds":\#(barSeconds),"reason":"test kick"}"#.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    func stop() async {
        _ = try? await within(10, "the server to stop") { [local] in await local.stop() }
    }
}
