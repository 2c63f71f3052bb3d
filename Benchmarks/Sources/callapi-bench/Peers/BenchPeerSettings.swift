import CallAPIMQTT
import CallAPIServer
import Foundation

/// Which peer a bench runs over and how to reach it.
struct BenchPeerSettings: Sendable, Equatable {
    var kind = BenchPeerKind.ours
    /// `mqtt://host:port` for Mosquitto, `http://host:port` for Synapse; the kind's default if nil.
    var url: String?
    /// Synapse's `registration_shared_secret`, with which the bench registers its users; for our server in
    /// another process, its HS256 secret (`CALLAPI_SECRET`), with which the bench mints its users' tokens.
    var registrationSecret: String?

    /// Starts (ours) or reaches (the others) the peer; a peer that does not answer is a ``BenchPeerError``.
    /// `orderedSends`: each client's messages must arrive in the order sent (CallAPI flows), which over HTTP
    /// means one request at a time per client.
    func start(orderedSends: Bool = false) async throws -> any BenchPeer {
        switch kind {
        case .ours:
            guard url != nil else { return OurServerPeer(server: try await BenchServer.start()) }
            let secret = registrationSecret ?? ProcessInfo.processInfo.environment["CALLAPI_SECRET"]
            guard let secret, !secret.isEmpty else { throw BenchPeerError.missingSecret(.ours) }
            let authority = try await TokenAuthority.make(key: .hs256(secret: secret))
            return OurServerPeer(url: try signalURL(), authority: authority)
        case .cluster:
            guard let url, url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
                throw BenchPeerError.badURL(url ?? "", expected: "postgres://user@host:port/database")
            }
            return try await OurClusterPeer.start(database: url)
        case .mosquitto:
            return try await MosquittoPeer.reach(try mqttConfiguration())
        case .synapse:
            guard let secret = registrationSecret, !secret.isEmpty else {
                throw BenchPeerError.missingSecret(.synapse)
            }
            var peer = try await SynapsePeer.reach(baseURL: try httpBaseURL(), registrationSecret: secret)
            peer.ordered = orderedSends
            return peer
        }
    }

    func mqttConfiguration() throws -> MQTTSignalClient.Configuration {
        let text = url ?? kind.defaultURL ?? ""
        do {
            return try MQTTSignalClient.Configuration(url: text)
        } catch {
            throw BenchPeerError.badURL(text, expected: "mqtt://host:port")
        }
    }

    /// `ws://host:port` (or `wss://`), with `/v1/signal` added when it has no path.
    func signalURL() throws -> String {
        let text = url ?? ""
        guard var components = URLComponents(string: text), ["ws", "wss"].contains(components.scheme),
            components.host != nil
        else { throw BenchPeerError.badURL(text, expected: "ws://host:port") }
        if components.path.isEmpty || components.path == "/" { components.path = "/v1/signal" }
        return components.string ?? text
    }

    func httpBaseURL() throws -> String {
        let text = url ?? kind.defaultURL ?? ""
        guard let components = URLComponents(string: text), ["http", "https"].contains(components.scheme),
            components.host != nil
        else { throw BenchPeerError.badURL(text, expected: "http://host:port") }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }
}
