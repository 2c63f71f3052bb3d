/// A match-queue method of ``SignalClient`` (docs/match.md).
enum MatchRequest: Sendable, Equatable {
    case enter(tags: [String])
    case leave
}
