/// The paths between users that a chaos scenario has cut, and when each cut path was restored: what the
/// devices check needs to know whether a caller could be reached.
struct CutPaths: Sendable {
    /// Two users, in either order.
    private struct Pair: Hashable, Sendable {
        let low: UInt
        let high: UInt

        init(_ a: UInt, _ b: UInt) { (low, high) = (min(a, b), max(a, b)) }
    }

    private var cutPairs: Set<Pair> = []
    private var restorations: [Pair: Int64] = [:]

    mutating func cut(_ a: UInt, _ b: UInt) { cutPairs.insert(Pair(a, b)) }

    /// Every cut path is restored at `now`.
    mutating func restoreAll(now: Int64) {
        for pair in cutPairs { restorations[pair] = now }
        cutPairs = []
    }

    func isCut(_ a: UInt, _ b: UInt) -> Bool { cutPairs.contains(Pair(a, b)) }

    /// When the path between `a` and `b` was last restored (nil: never cut).
    func restoredAt(_ a: UInt, _ b: UInt) -> Int64? { restorations[Pair(a, b)] }
}
