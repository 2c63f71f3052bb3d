import CallAPISignalProtocol

/// A user waiting in the match queue.
package struct MatchEntry: Sendable, Equatable {
    /// The session that entered: it hears of the match, and it closing ends the wait.
    var session: SessionID
    var tags: [String]
    /// Place in line (smaller waited longer); kept when the user enters again with other tags.
    var arrival: UInt64
}
