/// Who is online, nested in ``HubState``: each user's logged-in sessions in login order, and the sessions that hear
/// of presence changes. The hub asks it and sends the frames; it holds no frames itself.
package struct Presence: Sendable, Equatable {
    /// Logged-in sessions by user, in login order (a user with none is absent).
    private var sessionsByUser: [String: [SessionID]] = [:]
    /// The sessions subscribed to presence changes, in id order: a login or logout reaches them without a pass
    /// over every session.
    package private(set) var subscribers = SortedSessionIDs()
    /// Logged-in sessions, all users together.
    package private(set) var loggedInSessionCount = 0

    package init() {}

    /// Users with at least one logged-in session, sorted.
    package var onlineUsers: [String] { sessionsByUser.keys.sorted() }
    /// How many users have a logged-in session (without sorting them: the hub reads this after every event).
    package var onlineUserCount: Int { sessionsByUser.count }

    /// The logged-in sessions of `userId`, oldest login first.
    package func sessions(of userId: String) -> [SessionID] { sessionsByUser[userId] ?? [] }

    /// Whether `userId` has a logged-in session.
    package func isOnline(_ userId: String) -> Bool { sessionsByUser[userId] != nil }

    /// Notes that session `id` logged in as `userId`; returns whether the user just came online (its first session).
    package mutating func loggedIn(_ id: SessionID, as userId: String) -> Bool {
        loggedInSessionCount += 1
        let existing = sessionsByUser[userId] ?? []
        sessionsByUser[userId] = existing + [id]
        return existing.isEmpty
    }

    /// Forgets the logged-in session `id` of `userId`; returns whether the user just went offline (its last
    /// session).
    package mutating func loggedOut(_ id: SessionID, as userId: String) -> Bool {
        loggedInSessionCount -= 1
        var remaining = sessionsByUser[userId] ?? []
        remaining.removeAll { $0 == id }
        sessionsByUser[userId] = remaining.isEmpty ? nil : remaining
        return remaining.isEmpty
    }

    /// Session `id` hears of presence changes from now on.
    package mutating func subscribe(_ id: SessionID) { subscribers.insert(id) }

    /// Session `id` no longer hears of presence changes (also when it closes before logging in).
    package mutating func unsubscribe(_ id: SessionID) { subscribers.remove(id) }
}
