/// What the channel state enforces. Times in milliseconds.
public struct ChannelLimits: Sendable, Equatable {
    /// Users a channel may have at once (2: one-to-one calls).
    public var capacity: Int = 2
    /// Devices (members with one uid) each user may have in a channel at once.
    public var devicesPerUser: Int = 4
    /// How long a member may stay alone in a channel that has had two members before it is removed; `nil` is off.
    public var watchdogMillis: Int64?
    /// Whether tokens for any channel (`chn` `*`) are accepted.
    public var allowAnyChannelTokens = false
    /// Largest frame, in bytes of UTF-8.
    public var maxFrameBytes: Int = 64 * 1024
    /// A connection that has not joined after this long is closed.
    public var joinTimeoutMillis: Int64 = 10_000
    /// How long before its token expires a member is told.
    public var tokenNoticeMillis: Int64 = 60_000
    /// Sustained frames per second per connection.
    public var ratePerSecond: Double = 20
    /// Frames a connection may send in a burst.
    public var burst: Int = 40
    /// Frames refused for the rate limit in a row after which a connection is closed (only the first is answered).
    public var maxRefusalsInARow: Int = 200
    /// Frames waiting to be written to one connection, at most; past it the connection is closed (slow consumer).
    public var maxOutboxFrames: Int = 256
    /// Estimated bytes waiting to be written to one connection, at most (a lone frame always fits).
    public var maxOutboxBytes: Int = 4 << 20
    /// Kicks whose revocation of earlier tokens is remembered at once, at most; past it the oldest is forgotten
    /// (its member's tokens from before it work again, bars aside). Each is kept for the longest token lifetime.
    public var maxRevocations: Int = 100_000

    public init() {}

    /// The channel limits of a server: its channel settings, with the frame limit, login timeout, token notice,
    /// rate limit and outbox limits of signaling.
    public init(settings: ChannelSettings, hub: HubLimits) {
        capacity = settings.capacity
        devicesPerUser = settings.devicesPerUser
        watchdogMillis = settings.watchdogSeconds > 0 ? Int64(settings.watchdogSeconds) * 1000 : nil
        allowAnyChannelTokens = settings.allowAnyChannelTokens
        maxFrameBytes = hub.maxFrameBytes
        joinTimeoutMillis = hub.loginTimeoutMillis
        tokenNoticeMillis = hub.tokenNoticeMillis
        ratePerSecond = hub.ratePerSecond
        burst = hub.burst
        maxRefusalsInARow = hub.maxRefusalsInARow
        maxOutboxFrames = hub.maxOutboxFrames
        maxOutboxBytes = hub.maxOutboxBytes
    }
}
