/// One entry of the ICE servers a channel member gets with `joined`: the shape of WebRTC's `RTCIceServer`, so a
/// browser can pass it to `RTCPeerConnection` as it is.
///
/// STUN URLs (`stun:host:port`) come without credentials. TURN URLs (`turn:host:port?transport=udp|tcp`,
/// `turns:host:port`) come with short-lived credentials in the TURN REST API scheme: `username` is
/// `"<expiry, seconds since 1970>:<uid>"` and `credential` is base64(HMAC-SHA1(shared secret, username)), which a
/// TURN server configured with the same secret (coturn's `use-auth-secret`) checks without asking anyone.
public struct ICEServer: Codable, Sendable, Equatable {
    /// `stun:`, `turn:` or `turns:` URLs that share these credentials.
    public var urls: [String]
    /// The TURN username; `nil` for STUN.
    public var username: String?
    /// The TURN password; `nil` for STUN.
    public var credential: String?

    public init(urls: [String], username: String? = nil, credential: String? = nil) {
        self.urls = urls
        self.username = username
        self.credential = credential
    }

    /// The scheme of an ICE server URL.
    public enum Scheme: String, Sendable, CaseIterable {
        case stun, turn, turns
    }

    /// The scheme of `url` (`stun:`, `turn:`, `turns:`), or `nil` when it has none of them.
    public static func scheme(of url: String) -> Scheme? {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        return Scheme(rawValue: url[..<colon].lowercased())
    }
}
