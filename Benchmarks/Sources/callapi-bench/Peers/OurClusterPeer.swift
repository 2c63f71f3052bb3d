import CallAPIServer
import CallAPIServerTesting
import CallAPISignalClient
import Logging
import NIOCore

/// Two nodes of our server in this process, a cluster on one PostgreSQL (docs/scale-out.md). The benches' first
/// users of each pair (senders 100000+, callers 300000+) log in to node A, the others (receivers 200000+, callees
/// 400000+) to node B: every message and call crosses nodes through the database.
struct OurClusterPeer: BenchPeer {
    let nodes: [BenchServer]

    static func start(database: String) async throws -> OurClusterPeer {
        var nodes: [BenchServer] = []
        for id in ["bench_a", "bench_b"] {
            nodes.append(
                try await BenchServer.start(port: 0, adminKey: nil) { configuration in
                    configuration.limits = BenchServer.benchLimits
                    configuration.cluster = ClusterSettings(nodeId: id, databaseURL: database)
                })
        }
        return OurClusterPeer(nodes: nodes)
    }

    var title: String { "our cluster (two nodes in the bench's process, one PostgreSQL)" }

    /// Node A for the first user of a pair, node B for the other.
    func node(of user: String) -> BenchServer {
        let band = (Int(user) ?? 0) / 100_000
        return nodes[band % 2 == 1 ? 0 : 1]
    }

    func client(user: String, on loop: any EventLoop) async throws -> any BenchPeerClient {
        var logger = Logger(label: "callapi.bench.client")
        logger.logLevel = .critical
        let server = node(of: user)
        var configuration = SignalClientConfiguration(url: server.url)
        configuration.eventLoopGroup = loop
        let client = SignalClient(configuration: configuration, logger: logger)
        try await client.login(token: try await server.token(user))
        // Ready once the other node sees the user too (its presence read follows the row's notification): a bench
        // that sent at once would measure the start-up, not the relay.
        let other = nodes[server === nodes[0] ? 1 : 0].server
        let deadline = ContinuousClock.now + .seconds(10)
        while await !other.onlineUsers.contains(user) {
            guard ContinuousClock.now < deadline else { throw BenchTimeout(what: "the other node to see \(user)") }
            try await Task.sleep(for: .milliseconds(5))
        }
        return client
    }

    func stop() async {
        for node in nodes { try? await node.stop() }
    }
}
