import CallAPISignalProtocol

/// A server-placed call whose caller never sent its call message, or whose caller's session went away first.
public struct NotPlacedCall: Sendable, Equatable {
    public var callId: String
    public var caller: String
    public var callee: String
    public var media: CallMedia
    /// The match it was for, if any.
    public var matchId: String?
    /// `notPlaced` (the window ran out), `callerGone` (the session closed) or `placementsFull`.
    public var reason: String
}
