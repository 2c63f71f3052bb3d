import CallAPIServerCore
/// A push service client: sends one push and says how it went. Never throws: every failure is an outcome.
public protocol PushProvider: Sendable {
    func send(_ job: PushJob) async -> PushOutcome
}

/// A provider credential (an APNs provider token, an FCM access token) kept and reused until it is due for
/// replacement: a pure value with the time passed in.
struct CachedCredential: Sendable, Equatable {
    var value: String
    var issuedAt: Int64
    /// When it must no longer be used (issued + lifetime − margin).
    var replaceAt: Int64

    /// Whether it may still be used at `now`.
    func isUsable(now: Int64) -> Bool { now >= issuedAt && now < replaceAt }
}
