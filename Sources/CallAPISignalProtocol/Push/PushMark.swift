/// What a `send` means for push, set by the client from the CallAPI message it carries: the one thing the server
/// knows about the call protocol.
///
/// - `call`: the message rings the target. If the target has no online session but registered devices, the
///   server holds it for the ring time and pushes it to each device.
/// - `withdraw`: the message ends a call before it was answered (cancel, ring timeout). If the call is still
///   held, the server drops it (no push is sent for it any more) and keeps a tombstone that the target's
///   sessions get at login (`call_withdrawn`).
public struct PushMark: Codable, Sendable, Equatable {
    /// Whether the message rings (`call`) or withdraws a call (`withdraw`); the raw value is `kind` on the wire.
    public enum Kind: String, Codable, Sendable, Equatable {
        case call
        case withdraw
        /// The sender (the callee) answered or declined the call on this device: the pushes that ring its other
        /// devices are withdrawn (`reason` `answeredElsewhere` or `declinedElsewhere`).
        case answer
    }

    /// Why a call was withdrawn.
    public enum Reason: String, Codable, Sendable, Equatable {
        /// The caller cancelled it.
        case cancelled
        /// Its ring time ran out.
        case expired
        /// Another device of the callee answered it.
        case answeredElsewhere
        /// Another device of the callee declined it.
        case declinedElsewhere
    }

    public var kind: Kind
    /// The call's id (1-128 characters).
    public var callId: String
    /// `call`: the caller's display name for the system call screen.
    public var callerName: String?
    /// `call`: a video call (else audio).
    public var video: Bool?
    /// `withdraw`: why.
    public var reason: Reason?

    /// The longest call id, in characters.
    public static let maxCallIdLength = 128
    /// The longest caller name, in characters.
    public static let maxCallerNameLength = 128

    /// A `call` mark.
    public static func call(callId: String, callerName: String?, video: Bool) -> PushMark {
        PushMark(kind: .call, callId: callId, callerName: callerName, video: video, reason: nil)
    }

    /// A `withdraw` mark.
    public static func withdraw(callId: String, reason: Reason) -> PushMark {
        PushMark(kind: .withdraw, callId: callId, callerName: nil, video: nil, reason: reason)
    }

    /// An `answer` mark: the callee answered (`accepted`) or declined the call on the sending device.
    public static func answer(callId: String, accepted: Bool) -> PushMark {
        PushMark(
            kind: .answer, callId: callId, callerName: nil, video: nil,
            reason: accepted ? .answeredElsewhere : .declinedElsewhere)
    }

    public init(kind: Kind, callId: String, callerName: String?, video: Bool?, reason: Reason?) {
        self.kind = kind
        self.callId = callId
        self.callerName = callerName
        self.video = video
        self.reason = reason
    }

    /// Why the mark cannot be used, or nil when it can.
    public var problem: String? {
        guard !callId.isEmpty, callId.count <= Self.maxCallIdLength else {
            return "\"push.callId\" must have 1-\(Self.maxCallIdLength) characters"
        }
        if let callerName, callerName.count > Self.maxCallerNameLength {
            return "\"push.callerName\" must have at most \(Self.maxCallerNameLength) characters"
        }
        switch (kind, reason) {
        case (.call, _), (.withdraw, nil), (.withdraw, .cancelled), (.withdraw, .expired),
            (.answer, .answeredElsewhere),
            (.answer, .declinedElsewhere):
            return nil
        case (.withdraw, _):
            return "\"push.reason\" of a withdraw must be cancelled or expired"
        case (.answer, _):
            return "\"push.reason\" of an answer must be answeredElsewhere or declinedElsewhere"
        }
    }
}
