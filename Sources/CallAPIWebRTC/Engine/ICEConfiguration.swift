import CallAPISignalProtocol

/// The ICE servers and transport policy of a ``WebRTCEngine``'s peer links.
///
/// The servers given here are used in every channel, before those the channel transport hands over with the join
/// (a `callapi serve` server gives each member its configured STUN and TURN servers, TURN with credentials minted
/// for it). webrtcbin takes one STUN server (the first `stun:` URL) and any number of TURN servers (`turn:` over
/// UDP and TCP, or only the one named by `?transport=`; `turns:` over TLS).
public struct ICEConfiguration: Sendable, Equatable {
    /// Servers used in every channel.
    public var servers: [ICEServer]
    /// Which candidates ICE may use.
    public var transportPolicy: ICETransportPolicy

    /// `servers` (none by default: host candidates only, as on one LAN) with `transportPolicy`.
    public init(servers: [ICEServer] = [], transportPolicy: ICETransportPolicy = .all) {
        self.servers = servers
        self.transportPolicy = transportPolicy
    }

    /// What webrtcbin is given: the first STUN URL as `stun://host:port`, and every TURN URL with its credentials
    /// in it (`turn://user:password@host:port?transport=…`, each percent-escaped: webrtcbin splits an unescaped
    /// username such as `"1795890136:1001"` at its colon, and base64 passwords hold `/` and `+`). URLs that cannot
    /// be used (TURN without credentials, an unknown scheme) are left out.
    static func gstreamerURLs(_ servers: [ICEServer]) -> (stun: String?, turn: [String]) {
        var stun: String?
        var turn: [String] = []
        for server in servers {
            for url in server.urls {
                guard let scheme = ICEServer.scheme(of: url) else { continue }
                let rest = url.drop { $0 != ":" }.dropFirst().drop { $0 == "/" }
                guard !rest.isEmpty else { continue }
                switch scheme {
                case .stun:
                    if stun == nil { stun = "stun://\(rest)" }
                case .turn, .turns:
                    guard let username = server.username, let credential = server.credential else { continue }
                    turn.append("\(scheme.rawValue)://\(escaped(username)):\(escaped(credential))@\(rest)")
                }
            }
        }
        return (stun, turn)
    }

    /// `text` with every byte but RFC 3986's unreserved characters percent-escaped.
    static func escaped(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }
}

/// Which ICE candidates a peer link may use (WebRTC's `iceTransportPolicy`).
public enum ICETransportPolicy: String, Sendable, Equatable, CaseIterable {
    /// Host, server-reflexive and relayed candidates.
    case all
    /// Relayed candidates only: media always goes through a TURN server (hides the device's addresses).
    case relay
}
