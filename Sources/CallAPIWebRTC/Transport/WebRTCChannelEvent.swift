import CallAPISignalProtocol

/// What a ``WebRTCChannelTransport`` reports about one membership, in order.
public enum WebRTCChannelEvent: Sendable, Equatable {
    /// The join succeeded; `members` are the other members already in the channel (a user on several devices
    /// once per device), and `iceServers` the STUN and
    /// TURN servers the transport hands this member (used after the engine's own). Always the first event of a
    /// successful membership.
    case joined(members: [ChannelMember], iceServers: [ICEServer])
    /// The join was refused (bad token, channel full...). Nothing follows.
    case joinFailed(code: Int, message: String)
    /// `member` joined the channel after this member.
    case memberJoined(ChannelMember)
    /// `member` left: `reason` 0 when it quit, 1 when it dropped (connection lost), others transport-defined.
    case memberLeft(ChannelMember, reason: Int)
    /// `member` sent this member a signal.
    case signal(from: ChannelMember, WebRTCSignal)
    /// The channel token expires soon; renew it with ``WebRTCChannelMembership/renewToken(_:)``.
    case tokenWillExpire
    /// This member was removed from the channel (kicked, or the transport failed). Nothing follows;
    /// the engine reports `code` and `message` as an RTC error.
    case removed(code: Int, message: String)
}
