import CallAPISignalProtocol

/// The result of checking an RTC token's signature and claims (not whether it fits the join, nor its expiry: the
/// channel state checks those against the join and its clock).
public enum ChannelTokenCheck: Sendable, Equatable {
    /// The token is genuine: for `userId` in `channel` (`"*"`: any channel), issued at `issuedAt` and expiring at
    /// `expiresAt` (ms since 1970). A token issued before its member was kicked from the channel is refused.
    case valid(userId: String, channel: String, expiresAt: Int64, issuedAt: Int64)
    /// The token is not acceptable.
    case invalid(ChannelErrorCode, String)
}
