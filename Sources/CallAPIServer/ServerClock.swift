#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Wall time for the server: token expiry, held-message TTLs, idle timeouts. Tests pass a manual one.
public protocol SignalServerClock: Sendable {
    /// Milliseconds since 1970.
    func nowMillis() -> Int64
}

/// The system's wall clock.
public struct SystemServerClock: SignalServerClock {
    public init() {}
    public func nowMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
