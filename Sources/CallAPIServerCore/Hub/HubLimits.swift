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
    /// Frames waiting to be written to one session, at most; past it the session is closed as a slow consumer.
    public var maxOutboxFrames: Int = 256
    /// Estimated bytes waiting to be written to one session, at most (a lone frame always fits). The default
    /// holds a whole burst of the largest frames from one sender (40 × 64 KiB), written or not yet.
    public var maxOutboxBytes: Int = 4 << 20
    /// Frames refused for the rate limit in a row after which a session is closed. Only the first refusal of a
    /// run is answered; the rest are counted, so that refusals do not pile up in a flooding session's outbox.
    public var maxRefusalsInARow: Int = 200
    /// Messages held for offline users from one sender, at most.
    public var maxHeldPerSender: Int = 100
    /// Bytes of held message bodies on the whole server, at most.
    public var maxHeldBytes: Int = 64 << 20
    /// Connections that have not logged in yet, at most; more are closed at once with `server_busy`. The same
    /// number bounds connections still sending their HTTP request head (past it the oldest of them is closed).
    /// `callapi serve` derives its default from the descriptor limit (``maxUnauthenticated(descriptors:)``).
    public var maxUnauthenticated: Int = 1000
    /// A connection that has not sent a complete HTTP request head after this long is closed (slowloris).
    public var requestTimeoutMillis: Int64 = 10_000
    /// Windows and bounds of call invitations (docs/invitations.md).
    public var invitations = InvitationLimits()
    /// Bounds of the match queue and server-placed calls (docs/match.md).
    public var match = MatchLimits()

    public init() {}

    /// The default ``maxUnauthenticated`` for a process that may open `descriptors` files: each of the two stages
    /// (request head, login) may hold an eighth of the descriptors above 128, from 8 to 1000. So connections that
    /// have not logged in take at most a quarter of them, and the last descriptors stay for logged-in sessions,
    /// the database, push and webhooks (docs/security.md).
    public static func maxUnauthenticated(descriptors: Int) -> Int {
        min(1000, max(8, (descriptors - 128) / 8))
    }

    /// The limits by setting name, as `/metrics` publishes them (`callapi_limit{name="…"}`).
    package var published: [(name: String, value: Double)] {
        [
            ("max-frame-bytes", Double(maxFrameBytes)), ("rate", ratePerSecond), ("burst", Double(burst)),
            ("max-sessions", Double(maxSessionsPerUser)), ("max-held", Double(maxHeldPerUser)),
            ("max-held-per-sender", Double(maxHeldPerSender)), ("max-held-bytes", Double(maxHeldBytes)),
            ("max-ttl", Double(maxTTLSeconds)), ("max-outbox-frames", Double(maxOutboxFrames)),
            ("max-outbox-bytes", Double(maxOutboxBytes)), ("max-refusals", Double(maxRefusalsInARow)),
            ("max-unauthenticated", Double(maxUnauthenticated)), ("idle-timeout", Double(idleTimeoutMillis) / 1000),
            ("login-timeout", Double(loginTimeoutMillis) / 1000),
            ("request-timeout", Double(requestTimeoutMillis) / 1000),
            ("invitation-receive-window", Double(invitations.receiveWindowMillis) / 1000),
            ("invitation-expiry", Double(invitations.expiryMillis) / 1000),
            ("invitation-accept-window", Double(invitations.acceptWindowMillis) / 1000),
            ("match-max-waiting", Double(match.maxWaiting)),
            ("place-call-window", Double(match.placeWindowMillis) / 1000),
        ]
    }

    /// What clients are told in `welcome`.
    var wire: ServerFrame.Limits {
        .init(
            maxFrameBytes: maxFrameBytes, maxTTL: maxTTLSeconds, ratePerSecond: ratePerSecond, burst: burst,
            idleTimeout: Int(idleTimeoutMillis / 1000))
    }
}
