/// Why the server withdrew a pushed call before this device took it (its tombstone's reason).
public enum SystemCallWithdrawal: Sendable, Equatable, CaseIterable {
    /// The caller cancelled it.
    case cancelled
    /// Its ring time ran out.
    case expired
    /// Another device of this user answered it.
    case answeredElsewhere
    /// Another device of this user declined it.
    case declinedElsewhere

    /// How the system call screen shows the ending.
    public var endReason: SystemCallEndReason {
        switch self {
        case .cancelled: .remoteEnded
        case .expired: .unanswered
        case .answeredElsewhere: .answeredElsewhere
        case .declinedElsewhere: .declinedElsewhere
        }
    }
}
