/// One call in the ledger: who, what, when, and how it ended. Times are milliseconds since 1970 on the server's
/// clock.
public struct CallRecord: Sendable, Codable, Equatable {
    /// The caller's `callId`.
    public var callId: String
    /// The user who sent the call message.
    public var caller: String
    /// The user it was sent to.
    public var callee: String
    /// `video` or `audio`.
    public var media: CallMedia
    /// The RTC channel the call message named, if any.
    public var roomId: String?
    /// When the server relayed the call message.
    public var startedAt: Int64
    /// When it reached at least one of the callee's sessions (`nil`: never, the callee was offline).
    public var rangAt: Int64?
    /// When the callee's accept was relayed.
    public var acceptedAt: Int64?
    /// When both sides were known to be in the call: the server has no view of media, so this is the accept's time
    /// (see docs/ledger.md).
    public var connectedAt: Int64?
    /// When the call ended.
    public var endedAt: Int64
    /// The user whose message ended it; `nil` when the server ended it (expiry, dropped, callee offline).
    public var endedBy: String?
    /// Why it ended (see docs/ledger.md for the values).
    public var endReason: String
    /// How it ended.
    public var outcome: CallOutcome
    /// Milliseconds from accept to end; 0 when it was never accepted.
    public var durationMillis: Int64
    /// The sessions (devices) that took part, in the order they joined.
    public var devices: [CallDevice]

    public init(
        callId: String, caller: String, callee: String, media: CallMedia, roomId: String?, startedAt: Int64,
        rangAt: Int64?, acceptedAt: Int64?, connectedAt: Int64?, endedAt: Int64, endedBy: String?, endReason: String,
        outcome: CallOutcome, durationMillis: Int64, devices: [CallDevice]
    ) {
        self.callId = callId
        self.caller = caller
        self.callee = callee
        self.media = media
        self.roomId = roomId
        self.startedAt = startedAt
        self.rangAt = rangAt
        self.acceptedAt = acceptedAt
        self.connectedAt = connectedAt
        self.endedAt = endedAt
        self.endedBy = endedBy
        self.endReason = endReason
        self.outcome = outcome
        self.durationMillis = durationMillis
        self.devices = devices
    }
}

/// Audio or video, from the call message's action.
public enum CallMedia: String, Sendable, Codable, Equatable {
    case video
    case audio
}

/// One session (device) that took part in a call, and how the call ended for it.
public struct CallDevice: Sendable, Codable, Equatable {
    /// The user the session is logged in as.
    public var userId: String
    /// The server's session id.
    public var session: String
    /// The `deviceId` the device put in its messages, when it did (multi-device clients).
    public var deviceId: String?
    /// How the call ended for this device: `rang`, `called`, `answered`, `rejected`, `answeredElsewhere`,
    /// `rejectedElsewhere`, or the call's outcome.
    public var ending: String

    public init(userId: String, session: String, deviceId: String?, ending: String) {
        self.userId = userId
        self.session = session
        self.deviceId = deviceId
        self.ending = ending
    }
}
