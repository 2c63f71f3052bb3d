import CallAPISignalProtocol

/// The limits and timeouts the hub enforces. Times in milliseconds.
public struct HubLimits: Sendable, Equatable {
    /// Largest frame, in bytes of UTF-8 (default 64 KiB).
    public var maxFrameBytes: Int = 64 * 1024
    /// Sessions a user may have at once (devices).
    public var maxSessionsPerUser: Int = 5
    /// Messages held for one offline user at most.
    public var maxHeldPerUser: Int = 50
    /// Largest time-to-live a sender may ask for, in seconds.
    public var maxTTLSeconds: Int = 300
    /// Sustained frames per second per session.
    public var ratePerSecond: Double = 20
    /// Frames a session may send in a burst.
    public var burst: Int = 40
    /// A session that sends nothing for this long is closed.
    public var idleTimeoutMillis: Int64 = 45_000
    /// A connection that has not logged in after this long is closed.
    public var loginTimeoutMillis: Int64 = 10_000
    /// How long before its token expires a session is told.
    public var tokenNoticeMillis: Int64 = 60_000

    public init() {}

    /// What clients are told in `welcome`.
    var wire: ServerFrame.Limits {
        .init(
            maxFrameBytes: maxFrameBytes, maxTTL: maxTTLSeconds, ratePerSecond: ratePerSecond, burst: burst,
            idleTimeout: Int(idleTimeoutMillis / 1000))
    }
}
