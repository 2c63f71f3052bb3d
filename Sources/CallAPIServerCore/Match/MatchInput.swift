import CallAPISignalProtocol

/// Something that happened to the match queue or to server-placed calls (sessions are logged in). The time comes
/// with ``MatchMachine/handle(_:now:)``.
package enum MatchInput: Sendable, Equatable {
    /// `user`'s session enters the queue.
    case enter(SessionID, user: String, ClientFrame.MatchEnter)
    /// `user`'s session leaves the queue (for the user, whichever session entered).
    case leave(SessionID, user: String, ClientFrame.Request)
    /// The business server asks for a call; `callerSession` is the caller's session that will place it.
    case place(PlaceCallOrder, callId: String, callerSession: SessionID)
    /// The cluster's match queue paired the caller with `order.callee` on `tag` (docs/match.md, "In a cluster"):
    /// `callerSession`, the caller's session that entered, places the call.
    case placeMatched(PlaceCallOrder, callId: String, matchId: String, tag: String, callerSession: SessionID)
    /// `from` sent `to` the call message of `callId` (the hub saw it go through).
    case callSent(from: String, to: String, callId: String)
    /// A session closed.
    case sessionClosed(SessionID)
    /// Time passed: placement windows may have run out.
    case tick
}
