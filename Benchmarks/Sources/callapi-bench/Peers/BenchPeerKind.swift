import ArgumentParser

/// `--peer`: which relay a bench measures.
enum BenchPeerKind: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    /// Our signaling server, started in this process.
    case ours
    /// Two nodes of our server in this process as a cluster on the PostgreSQL at `--peer-url postgres://...`:
    /// senders and callers on one node, receivers and callees on the other (docs/scale-out.md).
    case cluster
    /// An MQTT 3.1.1 broker (Mosquitto) already running, QoS 1, one topic per user.
    case mosquitto
    /// A Matrix homeserver (Synapse) already running: to-device messages and long-poll `/sync`.
    case synapse

    /// Where the peer listens unless `--peer-url` says otherwise.
    var defaultURL: String? {
        switch self {
        case .ours, .cluster: nil
        case .mosquitto: "mqtt://127.0.0.1:1883"
        case .synapse: "http://127.0.0.1:8008"
        }
    }
}
