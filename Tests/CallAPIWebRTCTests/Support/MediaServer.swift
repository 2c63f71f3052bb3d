import CallAPI
import CallAPIServer
import CallAPIServerTesting
import CallAPISignalClient
import Foundation
import Logging

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real `callapi serve` on a loopback port, for calls with real media between engines in this process: the
/// shared ``TestServer`` with what these tests ask of it.
typealias MediaServer = TestServer

extension TestServer {
    /// Starts a server for media calls (the default admin key; closed sockets drain for at most 1 s).
    static func start() async throws -> TestServer {
        try await start(port: 0) { $0.drainSeconds = 1 }
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
        var request = URLRequest(url: URL(string: "\(httpBase)/v1/channels/\(channel)/kick")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(Self.defaultAdminKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"uid":\#(uid),"barSeconds":\#(barSeconds),"reason":"test kick"}"#.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }
}
