import CallAPISignalProtocol

/// The members of one RTC channel, in the order they joined: a joiner learns them in that order, which is how a
/// callee tells the caller's previous peer, still there, from the caller's next one (CallAPI's `roomInAnotherCall`).
/// A member is a uid on a device; a user ringing on a phone and a tablet is two members with one uid. A channel
/// holds a handful of members, so a list is the table.
struct RoomMembers: Sendable, Equatable {
    private struct Entry: Sendable, Equatable {
        var member: ChannelMember
        var session: SessionID
    }

    private var entries: [Entry] = []

    /// The connection of `member`; setting one appends it as the latest to join, `nil` removes it.
    subscript(member: ChannelMember) -> SessionID? {
        get { entries.first { $0.member == member }?.session }
        set {
            entries.removeAll { $0.member == member }
            if let newValue { entries.append(Entry(member: member, session: newValue)) }
        }
    }

    /// Members (devices) in the channel.
    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    /// The members, in join order.
    var members: [ChannelMember] { entries.map(\.member) }
    /// The distinct uids, in the order of each one's first member.
    var uids: [UInt] {
        var seen = Set<UInt>()
        return entries.map(\.member.uid).filter { seen.insert($0).inserted }
    }
    /// How many distinct users are in the channel.
    var userCount: Int { uids.count }
    /// The members of `uid`, in join order.
    func members(of uid: UInt) -> [ChannelMember] { entries.filter { $0.member.uid == uid }.map(\.member) }
    /// The connections, in join order.
    var sessions: [SessionID] { entries.map(\.session) }
    /// The connections of `uid`'s members, in join order.
    func sessions(of uid: UInt) -> [SessionID] { entries.filter { $0.member.uid == uid }.map(\.session) }
}
