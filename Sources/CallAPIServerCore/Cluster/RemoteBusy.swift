/// The users in an accepted call that other nodes of a cluster recorded: a copy of the cluster's busy rows, replaced
/// whole at each read (never edited call by call), so it is at most one presence read behind.
package struct RemoteBusy: Sendable, Equatable {
    private var byUser: [String: BusyUser] = [:]

    package init() {}

    /// The view of `users`; a user listed twice keeps the lowest call id (as one node's ledger does).
    package init(_ users: [BusyUser]) {
        for entry in users {
            if let kept = byUser[entry.user], kept.callId <= entry.callId { continue }
            byUser[entry.user] = entry
        }
    }

    /// The accepted call `user` is in on another node, if any.
    package func call(of user: String) -> BusyUser? {
        guard !byUser.isEmpty else { return nil }
        return byUser[user]
    }

    /// Whether `callId` is an accepted call between `a` and `b` on another node.
    package func isCall(_ callId: String, between a: String, and b: String) -> Bool {
        guard let entry = byUser[a] else { return false }
        return entry.callId == callId && entry.peer == b
    }
}
