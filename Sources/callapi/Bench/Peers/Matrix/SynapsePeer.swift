import AsyncHTTPClient
import NIOCore

/// A Matrix homeserver already running (Synapse in scripts/bench.sh); each bench user is registered with the
/// shared secret and is one ``MatrixSignalClient``.
struct SynapsePeer: BenchPeer {
    let http: MatrixHTTP
    let registrationSecret: String
    /// Whether a client's sends go out one at a time, in order (the calls bench) or concurrently (the relay).
    var ordered = false

    var title: String { "Synapse (Matrix to-device, long-poll /sync)" }

    /// Checks that a homeserver answers `/_matrix/client/versions` at `baseURL`.
    static func reach(baseURL: String, registrationSecret: String) async throws -> SynapsePeer {
        var configuration = HTTPClient.Configuration()
        // Every client holds a long poll open, and the relay sends concurrently: far more than 8 connections (but
        // not thousands: a saturated Synapse would get one per queued send, and its accept queue overflows, so
        // sends beyond these wait in the pool, their latency counted).
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 256)
        configuration.timeout = .init(connect: .seconds(10))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let http = MatrixHTTP(http: client, baseURL: baseURL)
        do {
            _ = try await http.call(.GET, "/_matrix/client/versions", timeout: .seconds(5), as: MatrixEmptyAnswer.self)
        } catch {
            try? await client.shutdown()
            throw BenchPeerError.unreachable(peer: .synapse, address: baseURL, reason: "\(error)")
        }
        return SynapsePeer(http: http, registrationSecret: registrationSecret)
    }

    func client(user: String) async throws -> any BenchPeerClient {
        let account = try await MatrixRegistration.account(user: user, secret: registrationSecret, http: http)
        return try await MatrixSignalClient.start(account: account, http: http, ordered: ordered)
    }

    func stop() async { try? await http.http.shutdown() }
}
