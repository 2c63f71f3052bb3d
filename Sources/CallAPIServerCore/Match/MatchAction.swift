import CallAPISignalProtocol

/// What ``MatchMachine`` asks for, in order: frames to sessions (the hub queues them, counting each against its
/// receiver's outbox), and placed calls to record as not placed.
package enum MatchAction: Sendable, Equatable {
    /// Send `frame` to the session.
    case send(SessionID, ServerFrame)
    /// A server-placed call was not placed by its caller in time (or its caller's session closed): record it
    /// `failed` in the call ledger.
    case callNotPlaced(NotPlacedCall)
}
