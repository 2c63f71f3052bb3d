/// Why a member left a channel: the `reason` of a `memberLeft` frame.
public enum ChannelLeaveReason: Int, Codable, Sendable, Equatable, CaseIterable {
    /// The member sent `leave`.
    case quit = 0
    /// The member's socket was lost or went idle.
    case dropped = 1
    /// The server removed the member: kicked, token expired, watchdog, replaced by a newer join, shutdown.
    case removed = 2
}
