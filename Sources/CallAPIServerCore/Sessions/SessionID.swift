/// A WebSocket connection to the server, logged in or not. Unique for the server's run.
public struct SessionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var number: UInt64
    public init(_ number: UInt64) { self.number = number }
    public var description: String { "s-\(number)" }
    public static func < (lhs: SessionID, rhs: SessionID) -> Bool { lhs.number < rhs.number }

    public func hash(into hasher: inout Hasher) { hasher.combine(number) }

    /// The number's own one-shot hash (the same seeded SipHash), which the dictionaries keyed by session id use
    /// directly: the synthesized path through a `Hasher` took twice the instructions. The tables a relayed message
    /// looks sessions up in are ``SessionTable``s, which hash the number themselves (docs/benchmarks.md).
    public func _rawHashValue(seed: Int) -> Int { number._rawHashValue(seed: seed) }
}
