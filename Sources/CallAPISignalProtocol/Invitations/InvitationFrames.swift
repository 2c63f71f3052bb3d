/// Limits of call invitations that client and server share (modelled on Agora RTM v1's call invitations).
public enum InvitationProtocol {
    /// The largest `content` or `response`, in bytes of UTF-8 (RTM v1: 8 KB).
    public static let maxContentBytes = 8 * 1024
    /// The longest `channelId`, in characters.
    public static let maxChannelIdLength = 64
}

/// Why an invitation ended in failure, on the wire (named after RTM v1's invitation error codes).
public enum InvitationFailureReason: String, Codable, Sendable, Equatable, CaseIterable {
    /// The other side went offline: the callee had no session left, or the caller's session closed.
    case peerOffline = "peer_offline"
    /// The callee's sessions did not acknowledge receiving the invitation within the receive window.
    case peerNoResponse = "peer_no_response"
    /// Nobody accepted, refused or cancelled it within the expiry window.
    case invitationExpire = "invitation_expire"
    /// The callee accepted, and the caller did not acknowledge the accept within the accept window.
    case acceptFailure = "accept_failure"
    /// A reason this library does not know (sent by a newer server).
    case unknown = "unknown"

    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(String.self)
        self = InvitationFailureReason(rawValue: raw) ?? .unknown
    }
}

extension ClientFrame {
    /// `invite`: invite user `to` (RTM v1 `sendLocalInvitation`). The server answers `local_invitation` with the
    /// same `id` (`sent_to_remote`, or `failure` when `to` is offline) or `error`.
    public struct Invite: Codable, Sendable, Equatable {
        public var id: Int?
        /// The callee's user id.
        public var to: String
        /// What the app tells the callee (up to ``InvitationProtocol/maxContentBytes``).
        public var content: String?
        /// The channel the call would use (up to ``InvitationProtocol/maxChannelIdLength`` characters).
        public var channelId: String?
        public init(id: Int? = nil, to: String, content: String? = nil, channelId: String? = nil) {
            self.id = id
            self.to = to
            self.content = content
            self.channelId = channelId
        }
    }

    /// A frame about one invitation: `invitation_received` (the callee's automatic receipt), `cancel_invitation`
    /// (the caller) and `acknowledge_accept` (the caller's automatic acknowledgement of an accept).
    public struct InvitationRef: Codable, Sendable, Equatable {
        public var id: Int?
        public var invitationId: String
        public init(id: Int? = nil, invitationId: String) {
            self.id = id
            self.invitationId = invitationId
        }
    }

    /// `accept_invitation` or `refuse_invitation`: the callee's answer, with a response for the caller.
    public struct InvitationReply: Codable, Sendable, Equatable {
        public var id: Int?
        public var invitationId: String
        /// Up to ``InvitationProtocol/maxContentBytes``.
        public var response: String?
        public init(id: Int? = nil, invitationId: String, response: String? = nil) {
            self.id = id
            self.invitationId = invitationId
            self.response = response
        }
    }
}

extension ServerFrame {
    /// `local_invitation`: what happened to an invitation this session sent. `id` is set when it answers a
    /// request (`invite`, `cancel_invitation`, `acknowledge_accept`).
    public struct LocalInvitation: Codable, Sendable, Equatable {
        /// The invitation's lifecycle on the caller's side (RTM v1 `LocalInvitationState`, plus `accept_pending`).
        public enum State: String, Codable, Sendable, Equatable {
            /// The server has it and handed it to the callee's sessions.
            case sentToRemote = "sent_to_remote"
            /// A session of the callee acknowledged receiving it.
            case receivedByRemote = "received_by_remote"
            /// The callee accepted; the caller's client acknowledges (`acknowledge_accept`) to complete it.
            case acceptPending = "accept_pending"
            /// Accepted, and the acknowledgement reached the server: final.
            case acceptedByRemote = "accepted_by_remote"
            /// Refused by the callee: final.
            case refusedByRemote = "refused_by_remote"
            /// Cancelled by the caller: final.
            case canceled
            /// Failed for `reason`: final.
            case failure
        }
        public var id: Int?
        public var invitationId: String
        public var calleeId: String
        public var state: State
        /// The callee's response (accepted or refused).
        public var response: String?
        /// Why it failed (`failure` only).
        public var reason: InvitationFailureReason?
        /// When it expires if nobody acts, ms since 1970, server clock (`sent_to_remote`, `received_by_remote`).
        public var expiresAt: Int64?
        public init(
            id: Int? = nil, invitationId: String, calleeId: String, state: State, response: String? = nil,
            reason: InvitationFailureReason? = nil, expiresAt: Int64? = nil
        ) {
            self.id = id
            self.invitationId = invitationId
            self.calleeId = calleeId
            self.state = state
            self.response = response
            self.reason = reason
            self.expiresAt = expiresAt
        }
    }

    /// `remote_invitation`: what happened to an invitation to this user. Every session of the callee gets it;
    /// `id` is set when it answers a request (`accept_invitation`, `refuse_invitation`).
    public struct RemoteInvitation: Codable, Sendable, Equatable {
        /// The invitation's lifecycle on the callee's side (RTM v1 `RemoteInvitationState`).
        public enum State: String, Codable, Sendable, Equatable {
            /// A new invitation (carries `content` and `channelId`); the client acknowledges it at once.
            case invitationReceived = "invitation_received"
            /// This session's accept was handed to the caller, whose acknowledgement is awaited.
            case acceptSentToLocal = "accept_sent_to_local"
            /// Accepted (by one of the user's sessions) and acknowledged by the caller: final.
            case accepted
            /// Refused (by one of the user's sessions): final.
            case refused
            /// Cancelled by the caller: final.
            case canceled
            /// Failed for `reason`: final.
            case failure
        }
        public var id: Int?
        public var invitationId: String
        public var callerId: String
        public var state: State
        /// The caller's content (`invitation_received`).
        public var content: String?
        /// The channel the call would use (`invitation_received`).
        public var channelId: String?
        /// The callee's response (accepted or refused).
        public var response: String?
        /// Why it failed (`failure` only).
        public var reason: InvitationFailureReason?
        /// When it expires if nobody acts, ms since 1970, server clock (`invitation_received`).
        public var expiresAt: Int64?
        public init(
            id: Int? = nil, invitationId: String, callerId: String, state: State, content: String? = nil,
            channelId: String? = nil, response: String? = nil, reason: InvitationFailureReason? = nil,
            expiresAt: Int64? = nil
        ) {
            self.id = id
            self.invitationId = invitationId
            self.callerId = callerId
            self.state = state
            self.content = content
            self.channelId = channelId
            self.response = response
            self.reason = reason
            self.expiresAt = expiresAt
        }
    }
}
