import CallAPI
import NIOCore
import NIOPosix

/// A relay the relay and calls benches run their workload over: our server, Mosquitto or Synapse.
protocol BenchPeer: Sendable {
    /// How tables name it ("our server", "Mosquitto", "Synapse").
    var title: String { get }
    /// A signaling client logged in (or registered) as `user`, a decimal id, receiving that user's messages, its
    /// connection on `loop`, so that every peer's clients are spread over the bench's loops the same way. Left to
    /// the shared group's round robin, placement depended on the client library: with ours a run's senders all
    /// landed on one loop and its receivers on the other, with the MQTT client's they mixed. Synapse's client runs
    /// on its HTTP client's loops and ignores it.
    func client(user: String, on loop: any EventLoop) async throws -> any BenchPeerClient
    /// Releases what the peer holds in this process (our in-process server, HTTP clients).
    func stop() async
}

/// Where the benches put their clients: each pair of users on one of the shared group's loops, in turn, so that
/// every loop carries as many senders as receivers (or callers as callees), whatever the peer.
enum BenchLoops {
    private static let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())

    /// The loop of pair `index`.
    static func forPair(_ index: Int) -> any EventLoop { loops[index % loops.count] }
}

/// A logged-in client of a ``BenchPeer``: CallAPI's signaling seam, and a way to leave.
protocol BenchPeerClient: ISignalClient {
    func close() async
}
