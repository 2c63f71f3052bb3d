/// A frame the server sends to a channel member.
public enum ChannelServerFrame: Sendable, Equatable {
    /// The join succeeded; `members` are the other members already there.
    case joined(Joined)
    /// The join was refused; the socket closes next.
    case joinFailed(Failure)
    /// Another member joined.
    case memberJoined(Member)
    /// Another member left.
    case memberLeft(MemberLeft)
    /// A signal from another member, stamped by the server with the sender's uid.
    case signal(Signal)
    /// A signal could not be relayed because its target is not in the channel.
    case signalFailed(SignalFailed)
    /// The membership's token expires soon; send `renew`.
    case tokenWillExpire(Expiry)
    /// The token was replaced.
    case renewed(Expiry)
    /// A frame was refused or a renewal failed; the membership stays.
    case error(Failure)
    /// The server removed the member; the socket closes next.
    case removed(Failure)

    /// Which frame this is (its raw value is the `type` string on the wire).
    public var kind: Kind {
        switch self {
        case .joined: .joined
        case .joinFailed: .joinFailed
        case .memberJoined: .memberJoined
        case .memberLeft: .memberLeft
        case .signal: .signal
        case .signalFailed: .signalFailed
        case .tokenWillExpire: .tokenWillExpire
        case .renewed: .renewed
        case .error: .error
        case .removed: .removed
        }
    }

    /// The `type` string on the wire.
    public var type: String { kind.rawValue }

    /// `joined`.
    public struct Joined: Codable, Sendable, Equatable {
        public var channel: String
        public var uid: UInt
        /// The other members, sorted.
        public var members: [UInt]
        /// When the token expires, in milliseconds since 1970 (server clock).
        public var expiresAt: Int64
        /// The STUN and TURN servers this member's media may use, TURN with credentials minted for it; empty when
        /// the server has none configured (an absent key reads as empty).
        public var iceServers: [ICEServer]
        public init(channel: String, uid: UInt, members: [UInt], expiresAt: Int64, iceServers: [ICEServer] = []) {
            self.channel = channel
            self.uid = uid
            self.members = members
            self.expiresAt = expiresAt
            self.iceServers = iceServers
        }

        enum CodingKeys: String, CodingKey { case channel, uid, members, expiresAt, iceServers }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            channel = try container.decode(String.self, forKey: .channel)
            uid = try container.decode(UInt.self, forKey: .uid)
            members = try container.decode([UInt].self, forKey: .members)
            expiresAt = try container.decode(Int64.self, forKey: .expiresAt)
            iceServers = try container.decodeIfPresent([ICEServer].self, forKey: .iceServers) ?? []
        }
    }

    /// `joinFailed`, `error` and `removed`: a ``ChannelErrorCode`` number and a sentence.
    public struct Failure: Codable, Sendable, Equatable {
        /// A ``ChannelErrorCode`` raw value (kept as a number so codes from a newer server still decode).
        public var code: Int
        public var message: String
        public init(code: ChannelErrorCode, message: String) {
            self.code = code.rawValue
            self.message = message
        }
        /// The code, when this library knows it.
        public var errorCode: ChannelErrorCode? { ChannelErrorCode(rawValue: code) }
    }

    /// `memberJoined`.
    public struct Member: Codable, Sendable, Equatable {
        public var uid: UInt
        public init(uid: UInt) { self.uid = uid }
    }

    /// `memberLeft`: a ``ChannelLeaveReason`` raw value in `reason`.
    public struct MemberLeft: Codable, Sendable, Equatable {
        public var uid: UInt
        public var reason: Int
        public init(uid: UInt, reason: ChannelLeaveReason) {
            self.uid = uid
            self.reason = reason.rawValue
        }
    }

    /// `signal`.
    public struct Signal: Codable, Sendable, Equatable {
        public var from: UInt
        public var data: String
        public init(from: UInt, data: String) {
            self.from = from
            self.data = data
        }
    }

    /// `signalFailed`.
    public struct SignalFailed: Codable, Sendable, Equatable {
        public var to: UInt
        public var message: String
        public init(to: UInt, message: String) {
            self.to = to
            self.message = message
        }
    }

    /// `tokenWillExpire` and `renewed`: when the token expires, in milliseconds since 1970.
    public struct Expiry: Codable, Sendable, Equatable {
        public var expiresAt: Int64
        public init(expiresAt: Int64) { self.expiresAt = expiresAt }
    }
}
