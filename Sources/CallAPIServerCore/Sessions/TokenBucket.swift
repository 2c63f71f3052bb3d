/// A token bucket: `burst` frames at once, refilled at `ratePerSecond`. Time is passed in.
package struct TokenBucket: Sendable, Equatable {
    var tokens: Double
    var updatedAt: Int64

    init(burst: Int, now: Int64) {
        tokens = Double(burst)
        updatedAt = now
    }

    /// Takes one token if there is one.
    mutating func take(now: Int64, ratePerSecond: Double, burst: Int) -> Bool {
        let elapsed = max(0, now - updatedAt)
        tokens = min(Double(burst), tokens + Double(elapsed) * ratePerSecond / 1000)
        updatedAt = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
