import CallAPISignalProtocol

/// A session's `match_enter` on a node of a cluster, where the match queue is rows of the cluster's PostgreSQL that
/// every node pairs from (docs/match.md, "In a cluster"). Its answer waits for the statement.
package struct ClusterMatchEntry: Sendable, Equatable {
    package var session: SessionID
    package var user: String
    package var enter: ClientFrame.MatchEnter

    package init(session: SessionID, user: String, enter: ClientFrame.MatchEnter) {
        self.session = session
        self.user = user
        self.enter = enter
    }
}

/// What came of a ``ClusterMatchEntry``.
package enum ClusterMatchOutcome: Sendable, Equatable {
    /// The user waits (no one waiting shares a tag).
    case waiting
    /// The queue is full (`waiting` users) and the user was not in it.
    case full(waiting: Int)
    /// Paired with a user who waited: taken out of the queue with it.
    case matched(ClusterMatchPeer)
    /// The statement failed (the database is unreachable, or this node is not a member).
    case failed(reason: String)
}

/// The waiting user a newcomer was paired with, as its row said.
package struct ClusterMatchPeer: Sendable, Equatable {
    package var user: String
    /// The node and session that entered it: that session hears of the match.
    package var node: String
    package var session: SessionID
    /// The newcomer's first tag that the peer waits on.
    package var tag: String

    package init(user: String, node: String, session: SessionID, tag: String) {
        self.user = user
        self.node = node
        self.session = session
        self.tag = tag
    }
}
