/// Why a bench could not run over the peer it was given.
enum BenchPeerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing answered at the peer's address.
    case unreachable(peer: BenchPeerKind, address: String, reason: String)
    case badURL(String, expected: String)
    /// `--peer synapse` needs Synapse's registration shared secret; `--peer ours --peer-url` the server's secret.
    case missingSecret(BenchPeerKind)
    /// The peer answered, but not as expected.
    case unexpectedAnswer(peer: BenchPeerKind, String)

    var description: String {
        switch self {
        case .unreachable(let peer, let address, let reason):
            "\(peer.rawValue) is not reachable at \(address) (\(reason)); start it first (scripts/bench.sh does) "
                + "or pass --peer-url"
        case .badURL(let text, let expected): "--peer-url \(text): expected \(expected)"
        case .missingSecret(.ours):
            "--peer ours --peer-url needs --peer-secret or CALLAPI_SECRET (the server's HS256 secret)"
        case .missingSecret: "--peer synapse needs --peer-secret (the homeserver's registration_shared_secret)"
        case .unexpectedAnswer(let peer, let what): "\(peer.rawValue) answered unexpectedly: \(what)"
        }
    }
}
