import CallAPISignalClient
import Logging

/// Our signaling server in this process; clients are ``SignalClient``s over WebSocket.
struct OurServerPeer: BenchPeer {
    let server: BenchServer

    var title: String { "our server" }

    func client(user: String) async throws -> any BenchPeerClient {
        var logger = Logger(label: "callapi.bench.client")
        logger.logLevel = .critical
        let client = SignalClient(configuration: .init(url: server.url), logger: logger)
        try await client.login(token: try await server.token(user))
        return client
    }

    func stop() async { await server.stop() }
}

extension SignalClient: BenchPeerClient {
    func close() async { logout() }
}
