/// Who is online, nested in ``HubState``: each user's logged-in sessions in login order, the users online on the
/// cluster's other nodes (``RemotePresence``), and the sessions that hear of presence changes. A user is online when it
/// has a session on any node. The hub asks it and sends the frames; it holds no frames itself.
package struct Presence: Sendable, Equatable {
    /// Logged-in sessions by user, in login order (a user with none is absent).
    private var sessionsByUser: [String: [SessionID]] = [:]
    /// The sessions subscribed to presence changes, in id order: a login or logout reaches them without a pass
    /// over every session.
    package private(set) var subscribers = SortedSessionIDs()
    /// Logged-in sessions, all users together.
    package private(set) var loggedInSessionCount = 0
    /// The users online on the cluster's other nodes (always empty on a single node).
    package private(set) var remote = RemotePresence()

    package init() {}

    /// Users with at least one logged-in session on any node, sorted.
    package var onlineUsers: [String] {
        guard !remote.isEmpty else { return sessionsByUser.keys.sorted() }
        return Set(sessionsByUser.keys).union(remote.users).sorted()
    }
    /// How many users have a logged-in session on this node (without sorting them: the hub reads this after every
    /// event; it is this node's metric).
    package var onlineUserCount: Int { sessionsByUser.count }

    /// The logged-in sessions of `userId` on this node, oldest login first.
    package func sessions(of userId: String) -> [SessionID] { sessionsByUser[userId] ?? [] }

    /// Every logged-in session on this node with its user, by user id then login order.
    package var loggedInSessions: [(SessionID, String)] {
        sessionsByUser.sorted { $0.key < $1.key }.flatMap { user, sessions in sessions.map { ($0, user) } }
    }

    /// Whether `userId` has a logged-in session on any node.
    package func isOnline(_ userId: String) -> Bool { sessionsByUser[userId] != nil || remote.isOnline(userId) }

    /// Notes that session `id` logged in as `userId`; returns whether the user just came online (its first session
    /// on any node).
    package mutating func loggedIn(_ id: SessionID, as userId: String) -> Bool {
        let wasOnline = isOnline(userId)
        loggedInSessionCount += 1
        sessionsByUser[userId, default: []].append(id)
        return !wasOnline
    }

    /// Forgets the logged-in session `id` of `userId`; returns whether the user just went offline (its last
    /// session on any node).
    package mutating func loggedOut(_ id: SessionID, as userId: String) -> Bool {
        loggedInSessionCount -= 1
        var remaining = sessionsByUser[userId] ?? []
        remaining.removeAll { $0 == id }
        sessionsByUser[userId] = remaining.isEmpty ? nil : remaining
        return !isOnline(userId)
    }

    /// Replaces the view of the other nodes with `new`; returns the users whose online state changed with it
    /// (online on some node before and on none now, or the reverse), sorted, with their new state.
    package mutating func replaceRemote(with new: RemotePresence) -> [(userId: String, online: Bool)] {
        let old = remote
        remote = new
        var changed: [(userId: String, online: Bool)] = []
        for user in Set(old.users).union(new.users) where sessionsByUser[user] == nil {
            let before = old.isOnline(user)
            let after = new.isOnline(user)
            if before != after { changed.append((user, after)) }
        }
        return changed.sorted { $0.userId < $1.userId }
    }

    /// Session `id` hears of presence changes from now on.
    package mutating func subscribe(_ id: SessionID) { subscribers.insert(id) }

    /// Session `id` no longer hears of presence changes (also when it closes before logging in).
    package mutating func unsubscribe(_ id: SessionID) { subscribers.remove(id) }
}
