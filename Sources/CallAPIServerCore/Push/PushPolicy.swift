/// How the hub holds, pushes and withdraws calls for users with registered devices.
public struct PushPolicy: Sendable, Equatable {
    /// How long a pushed call is held (its ring deadline), in seconds; a sender's shorter `ttl` wins.
    public var ringSeconds: Int = 30
    /// How long a withdrawn call's tombstone is kept for the user's sessions that log in, in seconds.
    public var tombstoneSeconds: Int = 120
    /// Tombstones kept per user; the oldest go first.
    public var maxTombstonesPerUser: Int = 16

    public init() {}
}
