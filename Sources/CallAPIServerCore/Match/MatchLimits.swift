/// Bounds of the match queue and of server-placed calls (docs/match.md). Times in milliseconds.
public struct MatchLimits: Sendable, Equatable {
    /// Users waiting in the match queue at most; one more is refused with `match_queue_full`.
    public var maxWaiting: Int = 10_000
    /// A caller's client must send the call message of a server-placed call within this time of being told, or
    /// the call is recorded `failed` (reason `notPlaced`).
    public var placeWindowMillis: Int64 = 5_000
    /// Server-placed calls waiting for their caller's call message at most; past it the oldest is given up.
    public var maxPendingPlacements: Int = 10_000

    public init() {}
}
