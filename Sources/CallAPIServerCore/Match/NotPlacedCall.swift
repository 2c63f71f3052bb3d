import CallAPISignalProtocol

/// A server-placed call whose caller never sent its call message, or whose caller's session went away first.
public struct NotPlacedCall: Sendable, Equatable {
    /// The id the server gave the call.
    public var callId: String
    /// The user whose client was asked to place it.
    public var caller: String
    /// The user it was to call.
    public var callee: String
    /// Video or audio.
    public var media: CallMedia
    /// The match it was for, if any.
    public var matchId: String?
    /// `notPlaced` (the window ran out), `callerGone` (the session closed) or `placementsFull`.
    public var reason: String
}
