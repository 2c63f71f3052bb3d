import CallAPIServerCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Wall time for the server: token expiry, held-message TTLs, idle timeouts, push retry delays. Tests pass a
/// manual one.
public protocol SignalServerClock: Sendable {
    /// Milliseconds since 1970.
    func nowMillis() -> Int64

    /// Returns once ``nowMillis()`` has reached `deadline`, or throws `CancellationError` when the task is
    /// cancelled first. A manual clock returns when it is moved past `deadline`.
    func sleep(untilMillis deadline: Int64) async throws
}

extension SignalServerClock {
    /// Sleeps on the system's clock for the time left until `deadline` (for clocks that follow real time).
    public func sleep(untilMillis deadline: Int64) async throws {
        let left = deadline - nowMillis()
        if left > 0 {
            try await Task.sleep(for: .milliseconds(left))
        } else {
            try Task.checkCancellation()
        }
    }
}

/// The system's wall clock.
public struct SystemServerClock: SignalServerClock {
    public init() {}
    public func nowMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
