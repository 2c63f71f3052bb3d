/// How `callapi serve` runs RTC channels (`/v1/rtc`), and where it reports their events.
public struct ChannelSettings: Sendable, Equatable {
    /// Users a channel may have at once (default 2: one-to-one calls).
    public var capacity: Int = 2
    /// Devices each user may have in one channel at once (default 4): a user's phone and tablet ringing together
    /// are two members with one uid.
    public var devicesPerUser: Int = 4
    /// Seconds a member may stay alone in a channel that has had two members before the server removes it;
    /// 0 (the default) turns the watchdog off.
    public var watchdogSeconds: Int = 0
    /// Whether RTC tokens for any channel (`chn` `*`) are accepted. Off by default: see docs/protocol.md.
    public var allowAnyChannelTokens = false
    /// Where channel events are posted, if anywhere.
    public var webhook: WebhookSettings?
    /// The STUN and TURN servers each member gets with `joined` (none by default).
    public var ice = ICESettings()

    public init() {}

    /// The settings by name, as `/metrics` publishes them (`callapi_limit{name="…"}`).
    package var published: [(name: String, value: Double)] {
        [
            ("channel-capacity", Double(capacity)), ("channel-devices", Double(devicesPerUser)),
            ("channel-watchdog", Double(watchdogSeconds)),
        ]
    }
}

/// Where and how channel events are posted.
public struct WebhookSettings: Sendable, Equatable {
    /// The URL each event is POSTed to.
    public var url: String
    /// The HMAC-SHA256 key of the `X-CallAPI-Signature` header; no header without one.
    public var secret: String?
    /// Attempts per event before it is given up (logged and counted).
    public var maxAttempts: Int = 5
    /// The delay before the first retry; it doubles each attempt.
    public var retryBaseMillis: Int64 = 500
    /// Events waiting to be delivered at most; more are logged and counted as failed.
    public var queueLimit: Int = 1000
    /// How long one delivery attempt may take.
    public var timeoutMillis: Int64 = 5000

    public init(url: String, secret: String? = nil) {
        self.url = url
        self.secret = secret
    }
}
