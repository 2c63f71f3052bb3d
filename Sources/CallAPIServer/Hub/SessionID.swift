/// A WebSocket connection to the server, logged in or not. Unique for the server's run.
public struct SessionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var number: UInt64
    public init(_ number: UInt64) { self.number = number }
    public var description: String { "s-\(number)" }
    public static func < (lhs: SessionID, rhs: SessionID) -> Bool { lhs.number < rhs.number }
}
