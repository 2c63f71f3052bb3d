/// Why a call ended, as a system call screen shows it (CallKit's `CXCallEndedReason`).
public enum SystemCallEndReason: Sendable, Equatable, CaseIterable {
    /// The other side ended, cancelled or declined the call.
    case remoteEnded
    /// Nobody answered before the ring time ran out.
    case unanswered
    /// Another device of this user declined it.
    case declinedElsewhere
    /// Another device of this user answered it.
    case answeredElsewhere
    /// The call could not be set up or was lost.
    case failed
}
