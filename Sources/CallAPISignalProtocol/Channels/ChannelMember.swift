/// One member of an RTC channel: a user's uid and, when the member named one at `join`, the device it joined from.
///
/// A user on several devices is several members with one uid: each device joins with its own `device`, and signals
/// are addressed to a member, not to a uid. A member without a device is the uid's only member when it is one; a
/// second join of the same uid and device replaces the first (a reconnect).
public struct ChannelMember: Codable, Hashable, Sendable, CustomStringConvertible {
    /// The user's uid (more than 0).
    public var uid: UInt
    /// The device the member joined from (the rules of a push device id), or `nil` when it named none.
    public var device: String?

    public init(uid: UInt, device: String? = nil) {
        self.uid = uid
        self.device = device
    }

    /// `1002` or `1002/tablet-7`, as logs and error messages name a member.
    public var description: String { device.map { "\(uid)/\($0)" } ?? "\(uid)" }
}
