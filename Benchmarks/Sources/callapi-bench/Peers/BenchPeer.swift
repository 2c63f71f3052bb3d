import CallAPI

/// A relay the relay and calls benches run their workload over: our server, Mosquitto or Synapse.
protocol BenchPeer: Sendable {
    /// How tables name it ("our server", "Mosquitto", "Synapse").
    var title: String { get }
    /// A signaling client logged in (or registered) as `user`, a decimal id, receiving that user's messages.
    func client(user: String) async throws -> any BenchPeerClient
    /// Releases what the peer holds in this process (our in-process server, HTTP clients).
    func stop() async
}

/// A logged-in client of a ``BenchPeer``: CallAPI's signaling seam, and a way to leave.
protocol BenchPeerClient: ISignalClient {
    func close() async
}
