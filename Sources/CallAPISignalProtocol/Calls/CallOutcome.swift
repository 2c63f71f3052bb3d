/// How a call ended, as the server saw it relayed.
public enum CallOutcome: String, Sendable, Codable, CaseIterable, Equatable {
    /// Accepted, then hung up by either side.
    case completed
    /// Not answered: the ring timer ran out on either side, or the callee was offline.
    case missed
    /// The callee refused.
    case rejected
    /// The callee was in another call (its client, or the server on its behalf, answered busy).
    case busy
    /// The caller gave up before an answer.
    case cancelled
    /// The call message could not be delivered (for a reason other than the callee being offline).
    case failed
    /// Another device of the callee answered (a device's ending; a call's outcome is never this).
    case answeredElsewhere
    /// Every participant's session vanished and none came back within the liveness window.
    case dropped

    /// Outcomes a callee sees as a missed call: nobody answered, the caller gave up while it rang, or it was busy.
    public static let missedByCallee: [CallOutcome] = [.missed, .cancelled, .busy]
}
