/// A frame the server sends to a client.
public enum ServerFrame: Sendable, Equatable {
    /// Login succeeded.
    case welcome(Welcome)
    /// The outcome of a `send`.
    case answer(Answer)
    /// A message from another user, stamped by the server with the sender's authenticated id.
    case message(Message)
    /// What finally happened to a message that was answered `queued`.
    case heldResult(HeldResult)
    /// The online users (answer to `users` and `subscribe`).
    case presence(Presence)
    /// A user came online or went offline (to subscribed sessions).
    case presenceChanged(PresenceChanged)
    /// The session's token expires soon; send `renew`.
    case tokenWillExpire(TokenWillExpire)
    /// The token was replaced.
    case renewed(Renewed)
    /// Answer to `ping`.
    case pong(Pong)
    /// A frame was refused; the session stays open unless a `closing` frame follows.
    case error(ErrorFrame)
    /// The server is about to close the socket, and why.
    case closing(Closing)
    /// A page of the user's calls (answer to `calls`).
    case calls(CallsPage)
    /// The call report was kept (answer to `report`).
    case reported(Reported)
    /// The user's registered devices (answer to `register_device`, `devices` and `remove_device`).
    case devices(Devices)
    /// A call pushed to this user was withdrawn before this session took it (a tombstone, sent at login).
    case callWithdrawn(CallWithdrawn)
    /// What happened to an invitation this session sent (docs/invitations.md).
    case localInvitation(LocalInvitation)
    /// What happened to an invitation to this user (docs/invitations.md).
    case remoteInvitation(RemoteInvitation)
    /// Place a call now, with the server's call id (docs/match.md); only the server sends it.
    case placeCall(PlaceCall)
    /// The match queue paired this user with another (docs/match.md).
    case matched(Matched)
    /// The answer to `match_enter` and `match_leave`.
    case matchQueue(MatchQueue)

    /// Which frame this is (its raw value is the `type` string on the wire).
    public var kind: Kind {
        switch self {
        case .welcome: .welcome
        case .answer: .answer
        case .message: .message
        case .heldResult: .heldResult
        case .presence: .presence
        case .presenceChanged: .presenceChanged
        case .tokenWillExpire: .tokenWillExpire
        case .renewed: .renewed
        case .pong: .pong
        case .error: .error
        case .closing: .closing
        case .calls: .calls
        case .reported: .reported
        case .devices: .devices
        case .callWithdrawn: .callWithdrawn
        case .localInvitation: .localInvitation
        case .remoteInvitation: .remoteInvitation
        case .placeCall: .placeCall
        case .matched: .matched
        case .matchQueue: .matchQueue
        }
    }

    /// The `type` string on the wire.
    public var type: String { kind.rawValue }

    /// `reported`: the answer to `report`.
    public struct Reported: Codable, Sendable, Equatable {
        public var id: Int?
        public init(id: Int?) { self.id = id }
    }

    /// `welcome`: who the session is and the limits it must respect.
    public struct Welcome: Codable, Sendable, Equatable {
        public var id: Int?
        public var userId: String
        public var sessionId: String
        /// When the token expires, in milliseconds since 1970 (server clock).
        public var expiresAt: Int64
        /// The server's clock, in milliseconds since 1970.
        public var serverTime: Int64
        public var version: Int
        public var limits: Limits
        public init(
            id: Int?, userId: String, sessionId: String, expiresAt: Int64, serverTime: Int64,
            version: Int = SignalProtocol.version, limits: Limits
        ) {
            self.id = id
            self.userId = userId
            self.sessionId = sessionId
            self.expiresAt = expiresAt
            self.serverTime = serverTime
            self.version = version
            self.limits = limits
        }
    }

    /// The limits a server enforces, told to each client at login.
    public struct Limits: Codable, Sendable, Equatable {
        /// Largest frame, in bytes of UTF-8.
        public var maxFrameBytes: Int
        /// Largest time-to-live for held messages, in seconds.
        public var maxTTL: Int
        /// Sustained frames per second per session.
        public var ratePerSecond: Double
        /// Frames a session may send in a burst.
        public var burst: Int
        /// Seconds without any frame after which the server drops a session.
        public var idleTimeout: Int
        public init(maxFrameBytes: Int, maxTTL: Int, ratePerSecond: Double, burst: Int, idleTimeout: Int) {
            self.maxFrameBytes = maxFrameBytes
            self.maxTTL = maxTTL
            self.ratePerSecond = ratePerSecond
            self.burst = burst
            self.idleTimeout = idleTimeout
        }
    }

    /// `answer`: delivered, queued or failed, for the `send` with the same `id`.
    public struct Answer: Codable, Sendable, Equatable {
        public var id: Int?
        public var result: SendResult
        /// Why it failed (only when `result` is `failed`).
        public var reason: SignalErrorCode?
        /// A sentence for people.
        public var message: String?
        /// The server's id for the message (delivered or queued).
        public var messageId: String?
        /// How many sessions it was handed to (delivered).
        public var sessions: Int?
        /// The time-to-live the server applied, in seconds (queued; may be less than asked).
        public var ttl: Int?
        public init(
            id: Int?, result: SendResult, reason: SignalErrorCode? = nil, message: String? = nil,
            messageId: String? = nil, sessions: Int? = nil, ttl: Int? = nil
        ) {
            self.id = id
            self.result = result
            self.reason = reason
            self.message = message
            self.messageId = messageId
            self.sessions = sessions
            self.ttl = ttl
        }
    }

    /// `message`: `body` from `from`, which the server vouches for.
    public struct Message: Codable, Sendable, Equatable {
        /// The authenticated sender's user id.
        public var from: String
        public var body: String {
            get { relayBody.text }
            set { relayBody = MessageBody(newValue) }
        }
        /// The body as it travels: a relayed one is written as its sender escaped it (see ``MessageBody``).
        package var relayBody: MessageBody
        /// When the server received it from the sender, in milliseconds since 1970 (server clock).
        public var sentAt: Int64
        public var messageId: String
        /// Whether the server held it while this user was offline.
        public var held: Bool?
        /// Set on a copy of a message this user sent from another session (`send` with `copy`): the user it
        /// was sent to. `from` is then this user.
        public var to: String?
        public init(
            from: String, body: String, sentAt: Int64, messageId: String, held: Bool? = nil, to: String? = nil
        ) {
            self.init(
                from: from, relayBody: MessageBody(body), sentAt: sentAt, messageId: messageId, held: held, to: to)
        }
        package init(
            from: String, relayBody: MessageBody, sentAt: Int64, messageId: String, held: Bool? = nil,
            to: String? = nil
        ) {
            self.from = from
            self.relayBody = relayBody
            self.sentAt = sentAt
            self.messageId = messageId
            self.held = held
            self.to = to
        }
        private enum CodingKeys: String, CodingKey {
            case from, relayBody = "body", sentAt, messageId, held, to
        }
    }

    /// `held_result`: a queued message was delivered or expired, or a relayed message was never written to a
    /// session that was closed as a slow consumer (`failed`, with a `reason`).
    public struct HeldResult: Codable, Sendable, Equatable {
        /// What finally happened to the message; the raw value is `result` on the wire.
        public enum Outcome: String, Codable, Sendable, Equatable {
            case delivered
            case expired
            case failed
        }
        public var messageId: String
        public var to: String
        public var result: Outcome
        /// Why a `failed` message was not delivered.
        public var reason: SignalErrorCode?
        public init(messageId: String, to: String, result: Outcome, reason: SignalErrorCode? = nil) {
            self.messageId = messageId
            self.to = to
            self.result = result
            self.reason = reason
        }
    }

    /// `presence`: the online users, sorted.
    public struct Presence: Codable, Sendable, Equatable {
        public var id: Int?
        public var online: [String]
        public init(id: Int?, online: [String]) {
            self.id = id
            self.online = online
        }
    }

    /// `presence_changed`: `userId` came online (first session) or went offline (last session).
    public struct PresenceChanged: Codable, Sendable, Equatable {
        public var userId: String
        public var online: Bool
        public init(userId: String, online: Bool) {
            self.userId = userId
            self.online = online
        }
    }

    /// `token_will_expire`: renew before `expiresAt`.
    public struct TokenWillExpire: Codable, Sendable, Equatable {
        public var expiresAt: Int64
        public var secondsLeft: Int
        public init(expiresAt: Int64, secondsLeft: Int) {
            self.expiresAt = expiresAt
            self.secondsLeft = secondsLeft
        }
    }

    /// `renewed`: the session now expires at `expiresAt`.
    public struct Renewed: Codable, Sendable, Equatable {
        public var id: Int?
        public var expiresAt: Int64
        public init(id: Int?, expiresAt: Int64) {
            self.id = id
            self.expiresAt = expiresAt
        }
    }

    /// `pong`.
    public struct Pong: Codable, Sendable, Equatable {
        public var id: Int?
        public var serverTime: Int64
        public init(id: Int?, serverTime: Int64) {
            self.id = id
            self.serverTime = serverTime
        }
    }

    /// `error`: the frame with request id `id` (if it had one) was refused.
    public struct ErrorFrame: Codable, Sendable, Equatable {
        public var id: Int?
        public var code: SignalErrorCode
        public var message: String
        public init(id: Int? = nil, code: SignalErrorCode, message: String) {
            self.id = id
            self.code = code
            self.message = message
        }
    }

    /// `closing`: the socket closes next, for `reason`.
    public struct Closing: Codable, Sendable, Equatable {
        public var reason: SignalErrorCode
        public var message: String
        public init(reason: SignalErrorCode, message: String) {
            self.reason = reason
            self.message = message
        }
    }
}

extension ServerFrame {
    /// `devices`: the user's registered devices, without their tokens.
    public struct Devices: Codable, Sendable, Equatable {
        public var id: Int?
        public var devices: [PushDeviceSummary]
        public init(id: Int?, devices: [PushDeviceSummary]) {
            self.id = id
            self.devices = devices
        }
    }

    /// `call_withdrawn`: the call `callId` was pushed to this user and is over before it was taken.
    public struct CallWithdrawn: Codable, Sendable, Equatable {
        public var callId: String
        public var reason: PushMark.Reason
        /// When it was withdrawn, milliseconds since 1970 (server clock).
        public var at: Int64
        public init(callId: String, reason: PushMark.Reason, at: Int64) {
            self.callId = callId
            self.reason = reason
            self.at = at
        }
    }
}

/// The outcome of a `send`.
public enum SendResult: String, Codable, Sendable, Equatable {
    /// Handed to at least one online session of the target user.
    case delivered
    /// The target is offline; the server holds the message for the time-to-live.
    case queued
    /// Not delivered and not held; `reason` says why.
    case failed
}
