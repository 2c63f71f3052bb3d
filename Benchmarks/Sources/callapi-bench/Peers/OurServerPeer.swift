import CallAPIServer
import CallAPISignalClient
import Logging
import NIOCore

/// Our signaling server: started in this process (``BenchServer``), or already running in another process
/// (`--peer-url ws://host:port` with the server's HS256 secret, with which the bench mints its own tokens).
/// Clients are ``SignalClient``s over WebSocket.
struct OurServerPeer: BenchPeer {
    /// The server's `/v1/signal` address.
    let url: String
    /// Whether the server runs in another process.
    let external: Bool
    private let mint: @Sendable (String) async throws -> String
    private let stopServer: @Sendable () async -> Void

    /// A server in this process.
    init(server: BenchServer) {
        url = server.url
        external = false
        mint = { try await server.token($0) }
        stopServer = { try? await server.stop() }
    }

    /// A server in another process at `url`, whose tokens `authority` signs.
    init(url: String, authority: TokenAuthority) {
        self.url = url
        external = true
        mint = { try await authority.issue(userId: $0, ttlSeconds: 3600).token }
        stopServer = {}
    }

    var title: String { external ? "our server" : "our server (in the bench's process)" }

    func client(user: String, on loop: any EventLoop) async throws -> any BenchPeerClient {
        var logger = Logger(label: "callapi.bench.client")
        logger.logLevel = .critical
        var configuration = SignalClientConfiguration(url: url)
        configuration.eventLoopGroup = loop
        let client = SignalClient(configuration: configuration, logger: logger)
        try await client.login(token: try await mint(user))
        return client
    }

    func stop() async { await stopServer() }
}

extension SignalClient: BenchPeerClient {
    func close() async { logout() }
}
