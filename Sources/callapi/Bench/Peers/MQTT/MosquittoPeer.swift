/// An MQTT broker already running (Mosquitto in scripts/bench.sh); each bench user is one MQTT connection.
struct MosquittoPeer: BenchPeer {
    let endpoint: MQTTSignalClient.Endpoint

    var title: String { "Mosquitto (MQTT 3.1.1, QoS 1)" }

    /// Checks that a broker answers CONNECT at `endpoint`.
    static func reach(_ endpoint: MQTTSignalClient.Endpoint) async throws -> MosquittoPeer {
        do {
            let probe = try await MQTTSignalClient.connect(
                user: "probe-\(UInt32.random(in: 0...UInt32.max))", to: endpoint)
            await probe.close()
        } catch {
            throw BenchPeerError.unreachable(
                peer: .mosquitto, address: "mqtt://\(endpoint.host):\(endpoint.port)", reason: "\(error)")
        }
        return MosquittoPeer(endpoint: endpoint)
    }

    func client(user: String) async throws -> any BenchPeerClient {
        try await MQTTSignalClient.connect(user: user, to: endpoint)
    }

    func stop() async {}
}
