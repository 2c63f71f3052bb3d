/// The members of one RTC channel, by uid, in the order they joined: a joiner learns them in that order, which is
/// how a callee tells the caller's previous peer, still there, from the caller's next one (CallAPI's
/// `roomInAnotherCall`). A channel holds a handful of members, so a list is the table.
struct RoomMembers: Sendable, Equatable {
    private struct Entry: Sendable, Equatable {
        var uid: UInt
        var session: SessionID
    }

    private var entries: [Entry] = []

    /// The member `uid`'s connection; setting one appends it as the latest to join, `nil` removes it.
    subscript(uid: UInt) -> SessionID? {
        get { entries.first { $0.uid == uid }?.session }
        set {
            entries.removeAll { $0.uid == uid }
            if let newValue { entries.append(Entry(uid: uid, session: newValue)) }
        }
    }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    /// The uids, in join order.
    var uids: [UInt] { entries.map(\.uid) }
    /// The connections, in join order.
    var sessions: [SessionID] { entries.map(\.session) }
}
