/// A frame a client sends to the server.
public enum ClientFrame: Sendable, Equatable {
    /// Log in with a token; the server answers `welcome` or `error`.
    case login(Login)
    /// Send a message to a user; the server answers `answer` with the same `id`.
    case send(Send)
    /// Replace the session's token before it expires; the server answers `renewed` or `error`.
    case renew(Renew)
    /// Ask for the online users; the server answers `presence`.
    case users(Request)
    /// Ask for the online users and for `presence_changed` frames from now on.
    case subscribe(Request)
    /// Stop `presence_changed` frames.
    case unsubscribe(Request)
    /// Liveness probe; the server answers `pong`.
    case ping(Request)
    /// End the session; the server answers `closing` and closes the socket.
    case logout(Request)
    /// Ask the call ledger for this user's calls; the server answers `calls` or `error`.
    case calls(CallsRequest)
    /// What this device saw of a call, for the ledger's time line; the server answers `reported` or `error`.
    case report(CallReport)
    /// Register (or replace) this user's device for call pushes; the server answers `devices`.
    case registerDevice(RegisterDevice)
    /// Ask for this user's registered devices; the server answers `devices`.
    case devices(Request)
    /// Remove one of this user's devices; the server answers `devices`.
    case removeDevice(RemoveDevice)
    /// Invite a user (docs/invitations.md); the server answers `local_invitation` or `error`.
    case invite(Invite)
    /// The callee's session got the invitation (sent by the client at once); no answer.
    case invitationReceived(InvitationRef)
    /// The caller cancels its invitation; the server answers `local_invitation` (`canceled`) or `error`.
    case cancelInvitation(InvitationRef)
    /// The callee accepts; the server answers `remote_invitation` (`accept_sent_to_local`) or `error`.
    case acceptInvitation(InvitationReply)
    /// The callee refuses; the server answers `remote_invitation` (`refused`) or `error`.
    case refuseInvitation(InvitationReply)
    /// The caller's client got the callee's accept (sent at once); the server answers `local_invitation`
    /// (`accepted_by_remote`) or `error`.
    case acknowledgeAccept(InvitationRef)
    /// Wait in the match queue with tags (docs/match.md); the server answers `match_queue` or `error`.
    case matchEnter(MatchEnter)
    /// Leave the match queue; the server answers `match_queue` (`waiting` false).
    case matchLeave(Request)

    /// Which frame this is (its raw value is the `type` string on the wire).
    public var kind: Kind {
        switch self {
        case .login: .login
        case .send: .send
        case .renew: .renew
        case .users: .users
        case .subscribe: .subscribe
        case .unsubscribe: .unsubscribe
        case .ping: .ping
        case .logout: .logout
        case .calls: .calls
        case .report: .report
        case .registerDevice: .registerDevice
        case .devices: .devices
        case .removeDevice: .removeDevice
        case .invite: .invite
        case .invitationReceived: .invitationReceived
        case .cancelInvitation: .cancelInvitation
        case .acceptInvitation: .acceptInvitation
        case .refuseInvitation: .refuseInvitation
        case .acknowledgeAccept: .acknowledgeAccept
        case .matchEnter: .matchEnter
        case .matchLeave: .matchLeave
        }
    }

    /// The `type` string on the wire.
    public var type: String { kind.rawValue }

    /// The client's request id, if the frame has one.
    public var requestId: Int? {
        switch self {
        case .login(let f): f.id
        case .send(let f): f.id
        case .renew(let f): f.id
        case .users(let f), .subscribe(let f), .unsubscribe(let f), .ping(let f), .logout(let f), .devices(let f),
            .matchLeave(let f):
            f.id
        case .calls(let f): f.id
        case .report(let f): f.id
        case .registerDevice(let f): f.id
        case .removeDevice(let f): f.id
        case .invite(let f): f.id
        case .invitationReceived(let f), .cancelInvitation(let f), .acknowledgeAccept(let f): f.id
        case .acceptInvitation(let f), .refuseInvitation(let f): f.id
        case .matchEnter(let f): f.id
        }
    }

    /// `login`: a JWT signed by the server's key.
    public struct Login: Codable, Sendable, Equatable {
        public var id: Int?
        public var token: String
        /// The protocol version the client speaks.
        public var version: Int?
        /// The push device this session runs on (the `deviceId` it registers, docs/push.md): a call to its user then
        /// pushes only the registered devices no session names. Optional; the same rules as a push device's id.
        public var deviceId: String?
        public init(id: Int? = nil, token: String, version: Int? = SignalProtocol.version, deviceId: String? = nil) {
            self.id = id
            self.token = token
            self.version = version
            self.deviceId = deviceId
        }
    }

    /// `send`: `body` (any string; CallAPI puts its JSON message there) for user `to`.
    public struct Send: Codable, Sendable, Equatable {
        /// Echoed in the answer; chosen by the client, unique per session.
        public var id: Int
        /// The target user id.
        public var to: String
        /// The payload, relayed unchanged.
        public var body: String {
            get { relayBody.text }
            set { relayBody = MessageBody(newValue) }
        }
        /// The payload as it travels: the server keeps a received body escaped (see ``MessageBody``).
        package var relayBody: MessageBody
        /// Seconds the server may hold the message while `to` is offline; absent or 0 means fail at once.
        public var ttl: Int?
        /// Whether the message rings a call or withdraws one (see ``PushMark``); absent for other messages.
        public var push: PushMark?
        /// `true`: the server also delivers the message to the sender's other sessions (its user's other
        /// devices), as a `message` whose `to` names the user it was sent to. Only when `to` is online. A send
        /// to the sender's own user with `copy` goes to its other sessions only (failing when there are none).
        public var copy: Bool?
        public init(id: Int, to: String, body: String, ttl: Int? = nil, push: PushMark? = nil, copy: Bool? = nil) {
            self.init(id: id, to: to, relayBody: MessageBody(body), ttl: ttl, push: push, copy: copy)
        }
        package init(
            id: Int, to: String, relayBody: MessageBody, ttl: Int? = nil, push: PushMark? = nil, copy: Bool? = nil
        ) {
            self.id = id
            self.to = to
            self.relayBody = relayBody
            self.ttl = ttl
            self.push = push
            self.copy = copy
        }
        private enum CodingKeys: String, CodingKey {
            case id, to, relayBody = "body", ttl, push, copy
        }
    }

    /// `renew`: a fresh token for the same user.
    public struct Renew: Codable, Sendable, Equatable {
        public var id: Int?
        public var token: String
        public init(id: Int? = nil, token: String) {
            self.id = id
            self.token = token
        }
    }

    /// A frame with nothing but an optional request id.
    public struct Request: Codable, Sendable, Equatable {
        public var id: Int?
        public init(id: Int? = nil) { self.id = id }
    }

    /// `register_device`: push credentials of one of the user's devices.
    public struct RegisterDevice: Codable, Sendable, Equatable {
        public var id: Int?
        public var device: PushDevice
        public init(id: Int? = nil, device: PushDevice) {
            self.id = id
            self.device = device
        }
    }

    /// `remove_device`: forget the user's device `deviceId`.
    public struct RemoveDevice: Codable, Sendable, Equatable {
        public var id: Int?
        public var deviceId: String
        public init(id: Int? = nil, deviceId: String) {
            self.id = id
            self.deviceId = deviceId
        }
    }
}
