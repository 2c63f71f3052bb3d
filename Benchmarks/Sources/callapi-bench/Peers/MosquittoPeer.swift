import CallAPIMQTT
import NIOCore
import NIOPosix

/// An MQTT broker already running (Mosquitto in scripts/bench.sh); each bench user is one
/// ``MQTTSignalClient`` connection.
struct MosquittoPeer: BenchPeer {
    let configuration: MQTTSignalClient.Configuration

    var title: String { "Mosquitto (MQTT 3.1.1, QoS 1)" }

    /// Checks that a broker answers CONNECT at the configured address.
    static func reach(_ configuration: MQTTSignalClient.Configuration) async throws -> MosquittoPeer {
        let peer = MosquittoPeer(configuration: configuration)
        do {
            let probe = try await peer.client(
                user: "probe-\(UInt32.random(in: 0...UInt32.max))", on: MultiThreadedEventLoopGroup.singleton.next())
            await probe.close()
        } catch {
            throw BenchPeerError.unreachable(
                peer: .mosquitto, address: "mqtt://\(configuration.host):\(configuration.port)", reason: "\(error)")
        }
        return peer
    }

    func client(user: String, on loop: any EventLoop) async throws -> any BenchPeerClient {
        var configuration = configuration
        configuration.eventLoopGroup = loop
        let client = MQTTSignalClient(configuration: configuration)
        try await client.login(userId: user)
        return client
    }

    func stop() async {}
}

extension MQTTSignalClient: BenchPeerClient {
    func close() async { await logout() }
}
