/// A frame a channel member sends to the server on ``ChannelProtocol/webSocketPath``.
public enum ChannelClientFrame: Sendable, Equatable {
    /// Join a channel; must be the first frame. The server answers `joined` or `joinFailed`.
    case join(Join)
    /// Relay `data` to another member of the channel.
    case signal(Signal)
    /// Replace the membership's token before it expires; the server answers `renewed` or `error`.
    case renew(Renew)
    /// Leave the channel; the server closes the socket (1000).
    case leave

    /// Which frame this is (its raw value is the `type` string on the wire).
    public var kind: Kind {
        switch self {
        case .join: .join
        case .signal: .signal
        case .renew: .renew
        case .leave: .leave
        }
    }

    /// The `type` string on the wire.
    public var type: String { kind.rawValue }

    /// `join`: the channel, the member's uid and an RTC token for both, and the device it joins from.
    public struct Join: Codable, Sendable, Equatable {
        public var channel: String
        /// The member's uid (more than 0); the token's subject must be its decimal form.
        public var uid: UInt
        /// An RTC token (scope `rtc`) for `channel`.
        public var token: String
        /// The device this member joins from (the rules of a push device id): a user's devices are separate members
        /// of one channel. Without it, a second join of the uid replaces the first.
        public var device: String?
        public init(channel: String, uid: UInt, token: String, device: String? = nil) {
            self.channel = channel
            self.uid = uid
            self.token = token
            self.device = device
        }

        /// The member this join makes.
        public var member: ChannelMember { ChannelMember(uid: uid, device: device) }
    }

    /// `signal`: an opaque string for the member `to` (on `device`, which must be named when `to` is in the channel
    /// on several devices).
    public struct Signal: Codable, Sendable, Equatable {
        public var to: UInt
        public var device: String?
        public var data: String
        public init(to: UInt, device: String? = nil, data: String) {
            self.to = to
            self.device = device
            self.data = data
        }

        public init(to member: ChannelMember, data: String) {
            self.init(to: member.uid, device: member.device, data: data)
        }
    }

    /// `renew`: a fresh RTC token for the same channel and uid.
    public struct Renew: Codable, Sendable, Equatable {
        public var token: String
        public init(token: String) { self.token = token }
    }
}
