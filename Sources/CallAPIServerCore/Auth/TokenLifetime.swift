/// How long the tokens the server issues may live: the most a `ttl` may ask for, and so how long a channel keeps a
/// revocation (every token issued before it has expired by then).
public enum TokenLifetime {
    /// The longest `ttl` in seconds (30 days).
    public static let maxSeconds = 30 * 24 * 3600
}
