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
        /// The other members' uids, in the order they joined, each once (for clients that know no devices).
        public var members: [UInt]
        /// The other members, in the order they joined, with their devices: a uid appears once per device. An
        /// absent key (an older server) reads as `members` without devices.
        public var devices: [ChannelMember]
        /// When the token expires, in milliseconds since 1970 (server clock).
        public var expiresAt: Int64
        /// The STUN and TURN servers this member's media may use, TURN with credentials minted for it; empty when
        /// the server has none configured (an absent key reads as empty).
        public var iceServers: [ICEServer]

        /// `devices` are the other members in join order; `members` is made from them.
        public init(
            channel: String, uid: UInt, devices: [ChannelMember], expiresAt: Int64, iceServers: [ICEServer] = []
        ) {
            self.channel = channel
            self.uid = uid
            var seen = Set<UInt>()
            self.members = devices.map(\.uid).filter { seen.insert($0).inserted }
            self.devices = devices
            self.expiresAt = expiresAt
            self.iceServers = iceServers
        }

        enum CodingKeys: String, CodingKey { case channel, uid, members, devices, expiresAt, iceServers }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            channel = try container.decode(String.self, forKey: .channel)
            uid = try container.decode(UInt.self, forKey: .uid)
            members = try container.decode([UInt].self, forKey: .members)
            devices =
                try container.decodeIfPresent([ChannelMember].self, forKey: .devices)
                ?? members.map { ChannelMember(uid: $0) }
            expiresAt = try container.decode(Int64.self, forKey: .expiresAt)
            iceServers = try container.decodeIfPresent([ICEServer].self, forKey: .iceServers) ?? []
        }
    }

    /// `joinFailed`, `error` and `removed`: a ``ChannelErrorCode`` number and a sentence.
    public struct Failure: Codable, Sendable, Equatable {
        /// A ``ChannelErrorCode`` raw value (kept as a number so codes from a newer server still decode).
        public var code: Int
        public var message: String
        /// With ``ChannelErrorCode/channelElsewhere``: the address of the node where the channel's members meet
        /// (`ws(s)://host:port`), when that node advertises one.
        public var location: String?
        public init(code: ChannelErrorCode, message: String, location: String? = nil) {
            self.code = code.rawValue
            self.message = message
            self.location = location
        }
        /// The code, when this library knows it.
        public var errorCode: ChannelErrorCode? { ChannelErrorCode(rawValue: code) }
    }

    /// `memberJoined`: the member, `uid` and (when it named one) `device`.
    public typealias Member = ChannelMember

    /// `memberLeft`: the member and a ``ChannelLeaveReason`` raw value in `reason`.
    public struct MemberLeft: Codable, Sendable, Equatable {
        public var uid: UInt
        public var device: String?
        public var reason: Int
        public init(uid: UInt, device: String? = nil, reason: ChannelLeaveReason) {
            self.uid = uid
            self.device = device
            self.reason = reason.rawValue
        }

        public var member: ChannelMember { ChannelMember(uid: uid, device: device) }
    }

    /// `signal`: from the member `from` (on `device`, when the sender named one), stamped by the server.
    public struct Signal: Codable, Sendable, Equatable {
        public var from: UInt
        public var device: String?
        public var data: String
        public init(from: UInt, device: String? = nil, data: String) {
            self.from = from
            self.device = device
            self.data = data
        }

        public var sender: ChannelMember { ChannelMember(uid: from, device: device) }
    }

    /// `signalFailed`: the signal's target, as the sender named it.
    public struct SignalFailed: Codable, Sendable, Equatable {
        public var to: UInt
        public var device: String?
        public var message: String
        public init(to: UInt, device: String? = nil, message: String) {
            self.to = to
            self.device = device
            self.message = message
        }
    }

    /// `tokenWillExpire` and `renewed`: when the token expires, in milliseconds since 1970.
    public struct Expiry: Codable, Sendable, Equatable {
        public var expiresAt: Int64
        public init(expiresAt: Int64) { self.expiresAt = expiresAt }
    }
}
