/// Why the server will not place a call now.
public enum PlaceCallRefusal: Sendable, Equatable, Error {
    /// The caller and the callee are the same user.
    case sameUser
    /// The user has no logged-in session.
    case offline(user: String)
    /// The user is in an accepted call in the call ledger.
    case busy(user: String, callId: String)
}
