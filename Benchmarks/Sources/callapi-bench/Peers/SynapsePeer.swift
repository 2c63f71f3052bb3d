import AsyncHTTPClient
import CallAPIMatrix
import NIOCore

/// A Matrix homeserver already running (Synapse in scripts/bench.sh); each bench user is registered with the
/// shared secret and is one ``MatrixSignalClient``.
struct SynapsePeer: BenchPeer {
    let http: HTTPClient
    let baseURL: String
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
        do {
            let response = try await client.execute(
                HTTPClientRequest(url: baseURL + "/_matrix/client/versions"), timeout: .seconds(5))
            guard response.status == .ok else {
                throw BenchPeerError.unexpectedAnswer(peer: .synapse, "\(response.status)")
            }
        } catch {
            try? await client.shutdown()
            throw BenchPeerError.unreachable(peer: .synapse, address: baseURL, reason: "\(error)")
        }
        return SynapsePeer(http: client, baseURL: baseURL, registrationSecret: registrationSecret)
    }

    func client(user: String, on loop: any EventLoop) async throws -> any BenchPeerClient {
        let account = try await MatrixRegistration.account(
            user: user, secret: registrationSecret, baseURL: baseURL, httpClient: http)
        var configuration = MatrixSignalClient.Configuration(baseURL: baseURL)
        configuration.orderedSends = ordered
        // The relay offers thousands of messages a second: its sends are not queued (ordered is for calls).
        configuration.maxQueuedSends = 100_000
        let client = MatrixSignalClient(configuration: configuration, httpClient: http)
        try await client.login(account: account)
        return client
    }

    func stop() async { try? await http.shutdown() }
}

extension MatrixSignalClient: BenchPeerClient {
    func close() async { await logout() }
}
