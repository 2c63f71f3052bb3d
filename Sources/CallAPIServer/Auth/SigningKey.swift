import CallAPIServerCore
/// The key the server signs and checks tokens with.
public enum SigningKey: Sendable, Equatable {
    /// HMAC-SHA256 with a shared secret (the default).
    case hs256(secret: String)
    /// ECDSA P-256 with a private key in PEM: signs and verifies.
    case es256PrivateKey(pem: String)
    /// ECDSA P-256 with only a public key in PEM: verifies tokens minted elsewhere; cannot issue.
    case es256PublicKey(pem: String)

    /// The secret used when none is configured. Anyone can mint tokens with it: development only.
    public static let developmentSecret = "callapi-dev-secret-do-not-use-in-production"

    /// The algorithm's JOSE name.
    public var algorithm: String {
        switch self {
        case .hs256: "HS256"
        case .es256PrivateKey, .es256PublicKey: "ES256"
        }
    }
}
