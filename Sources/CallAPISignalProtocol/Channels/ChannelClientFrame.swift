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

    /// `join`: the channel, the member's uid and an RTC token for both.
    public struct Join: Codable, Sendable, Equatable {
        public var channel: String
        /// The member's uid (more than 0); the token's subject must be its decimal form.
        public var uid: UInt
        /// An RTC token (scope `rtc`) for `channel`.
        public var token: String
        public init(channel: String, uid: UInt, token: String) {
            self.channel = channel
            self.uid = uid
            self.token = token
        }
    }

    /// `signal`: an opaque string for the member `to`.
    public struct Signal: Codable, Sendable, Equatable {
        public var to: UInt
        public var data: String
        public init(to: UInt, data: String) {
            self.to = to
            self.data = data
        }
    }

    /// `renew`: a fresh RTC token for the same channel and uid.
    public struct Renew: Codable, Sendable, Equatable {
        public var token: String
        public init(token: String) { self.token = token }
    }
}
