import CallAPISignalProtocol

/// A call the business server asks the server to place (`POST /v1/calls`, docs/match.md).
public struct PlaceCallOrder: Sendable, Equatable {
    public var caller: String
    public var callee: String
    public var media: CallMedia

    public init(caller: String, callee: String, media: CallMedia) {
        self.caller = caller
        self.callee = callee
        self.media = media
    }
}

/// Why the server will not place a call now.
public enum PlaceCallRefusal: Sendable, Equatable, Error {
    /// The caller and the callee are the same user.
    case sameUser
    /// The user has no logged-in session.
    case offline(user: String)
    /// The user is in an accepted call in the call ledger.
    case busy(user: String, callId: String)
}

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
