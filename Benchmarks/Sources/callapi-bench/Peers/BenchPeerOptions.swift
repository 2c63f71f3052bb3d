import ArgumentParser

/// The `--peer` options shared by `callapi-bench relay` and `callapi-bench calls`.
struct BenchPeerOptions: ParsableArguments {
    @Option(
        help:
            "The relay to measure: ours (started in this process, or running at --peer-url), mosquitto or synapse (already running)."
    )
    var peer: BenchPeerKind = .ours
    @Option(
        help:
            "The peer's address: ws://host:port (ours in another process), mqtt://host:port (default 127.0.0.1:1883) or http://host:port (default 8008)."
    )
    var peerURL: String?
    @Option(
        help:
            "Synapse's registration_shared_secret, to register the bench's users; for ours at --peer-url, its HS256 secret (default: CALLAPI_SECRET)."
    )
    var peerSecret: String?

    var settings: BenchPeerSettings {
        BenchPeerSettings(kind: peer, url: peerURL, registrationSecret: peerSecret)
    }
}
