import CallAPISignalProtocol

/// What happens to an ``RTCChannelConnection``, delivered serially in the server's order.
///
/// The first event is ``joined(members:iceServers:)`` or ``joinFailed(code:message:)``; ``joinFailed(code:message:)`` and
/// ``removed(code:message:)`` are the last. Codes are `ChannelErrorCode` raw values (`connectionLost`, 100, when the
/// connection failed or was lost), kept as numbers as the frames keep them, so that a code from a newer server
/// still arrives; match on ``errorCode`` and ``leaveReason`` to use the enums.
public enum RTCChannelClientEvent: Sendable, Equatable {
    /// The join succeeded; `members` are the other members already in the channel, in the order they joined (a
    /// user on several devices is there once per device). `iceServers` are the STUN and TURN servers the server hands this member (TURN with credentials minted for
    /// it); empty when it has none.
    case joined(members: [ChannelMember], iceServers: [ICEServer])
    /// The join was refused, or the connection failed before it succeeded.
    case joinFailed(code: Int, message: String)
    /// Another member joined (another user, or another device of one).
    case memberJoined(ChannelMember)
    /// Another member left: `reason` 0 quit, 1 dropped, 2 removed by the server (`ChannelLeaveReason`).
    case memberLeft(ChannelMember, reason: Int)
    /// A signal from another member (its uid and device stamped by the server).
    case signal(from: ChannelMember, data: String)
    /// The token expires soon: call ``RTCChannelConnection/renewToken(_:)``.
    case tokenWillExpire
    /// The server removed this member, or the connection was lost.
    case removed(code: Int, message: String)
}

extension RTCChannelClientEvent {
    /// The code of a ``joinFailed(code:message:)`` or ``removed(code:message:)`` as a `ChannelErrorCode`; nil for
    /// other events, and for a code this library does not know (the number is still in the event).
    public var errorCode: ChannelErrorCode? {
        switch self {
        case .joinFailed(let code, _), .removed(let code, _): ChannelErrorCode(rawValue: code)
        default: nil
        }
    }

    /// The reason of a ``memberLeft(_:reason:)`` as a `ChannelLeaveReason`; nil for other events, and for a
    /// reason this library does not know.
    public var leaveReason: ChannelLeaveReason? {
        if case .memberLeft(_, let reason) = self { ChannelLeaveReason(rawValue: reason) } else { nil }
    }
}
