import CallAPISignalProtocol
import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The STUN and TURN servers a server hands each channel member with `joined`, TURN with credentials of its own
/// (the TURN REST API scheme; coturn's `use-auth-secret` with the same `static-auth-secret`).
public struct ICESettings: Sendable, Equatable {
    /// `stun:` URLs, handed out as they are.
    public private(set) var stunURLs: [String] = []
    /// `turn:` and `turns:` URLs, handed out with credentials minted per member.
    public private(set) var turnURLs: [String] = []
    /// The secret shared with the TURN server; set whenever there are TURN URLs.
    public private(set) var turnSecret: String?
    /// How long minted credentials are valid. The TURN server checks the expiry on every request of an allocation,
    /// refreshes included, so a call longer than this loses its relay: the default is the scheme's suggested day.
    public private(set) var credentialSeconds: Int64 = 86_400

    /// No ICE servers: members get an empty list (host candidates only, as on a LAN).
    public init() {}

    /// Why ICE settings are wrong.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Settings for `urls` (each `stun:`, `turn:` or `turns:` with a host) and, when any is TURN, the shared secret.
    public init(urls: [String], turnSecret: String?, credentialSeconds: Int64 = 86_400) throws(Invalid) {
        for url in urls {
            guard let scheme = ICEServer.scheme(of: url) else {
                throw Invalid(description: "\"\(url)\" is not a stun:, turn: or turns: URL")
            }
            let rest = url.drop { $0 != ":" }.dropFirst()
            guard !rest.isEmpty, !rest.hasPrefix("/"), rest.utf8.count <= 512 else {
                throw Invalid(description: "\"\(url)\" needs a host (stun:host:3478, turn:host:3478?transport=tcp)")
            }
            switch scheme {
            case .stun: stunURLs.append(url)
            case .turn, .turns: turnURLs.append(url)
            }
        }
        guard credentialSeconds > 0 else { throw Invalid(description: "credentials must be valid for some time") }
        self.credentialSeconds = credentialSeconds
        if !turnURLs.isEmpty {
            guard let turnSecret, !turnSecret.isEmpty else {
                throw Invalid(description: "TURN servers need the secret shared with them (turn-secret-file)")
            }
            self.turnSecret = turnSecret
        }
    }

    /// The ICE servers for member `uid` at `now` (ms since 1970): STUN as configured, TURN with credentials that
    /// expire ``credentialSeconds`` from now.
    package func servers(for uid: UInt, now: Int64) -> [ICEServer] {
        var servers: [ICEServer] = []
        if !stunURLs.isEmpty { servers.append(ICEServer(urls: stunURLs)) }
        if let turnSecret, !turnURLs.isEmpty {
            let credentials = Self.turnCredentials(
                secret: turnSecret, user: String(uid), expiresAt: now / 1000 + credentialSeconds)
            servers.append(ICEServer(urls: turnURLs, username: credentials.username, credential: credentials.password))
        }
        return servers
    }

    /// The TURN REST API's credentials: username `"<expiry>:<user>"`, password base64(HMAC-SHA1(secret, username)).
    package static func turnCredentials(secret: String, user: String, expiresAt: Int64) -> (
        username: String, password: String
    ) {
        let username = "\(expiresAt):\(user)"
        let code = HMAC<Insecure.SHA1>.authenticationCode(
            for: Array(username.utf8), using: SymmetricKey(data: Array(secret.utf8)))
        return (username, Data(code).base64EncodedString())
    }
}
