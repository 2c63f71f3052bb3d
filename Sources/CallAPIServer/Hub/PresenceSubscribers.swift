/// The sessions that hear of presence changes (`subscribe`), in id order: a nested value of ``HubState``, so that a
/// user coming online or going offline reaches its subscribers without a pass over every session (it was one pass
/// and a sort per change).
struct PresenceSubscribers: Sendable, Equatable {
    /// Ascending, without repeats.
    private(set) var sessions: [SessionID] = []

    /// `session` hears of changes from now on.
    mutating func subscribe(_ session: SessionID) {
        let index = place(of: session)
        if index == sessions.count || sessions[index] != session { sessions.insert(session, at: index) }
    }

    /// `session` no longer hears of changes (it unsubscribed, or closed).
    mutating func unsubscribe(_ session: SessionID) {
        let index = place(of: session)
        if index < sessions.count, sessions[index] == session { sessions.remove(at: index) }
    }

    func contains(_ session: SessionID) -> Bool {
        let index = place(of: session)
        return index < sessions.count && sessions[index] == session
    }

    /// Where `session` is, or would be inserted (binary search).
    private func place(of session: SessionID) -> Int {
        var low = 0
        var high = sessions.count
        while low < high {
            let middle = (low + high) / 2
            if sessions[middle] < session { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
