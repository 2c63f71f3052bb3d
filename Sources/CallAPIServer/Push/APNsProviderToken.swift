import JWTKit

/// The APNs provider token: an ES256 JWT (`kid` = key id, `iss` = team id, `iat`) reused for every request and
/// replaced after ``refreshAfterMillis``. Apple refuses a token older than 60 minutes (403
/// `ExpiredProviderToken`) and answers 429 `TooManyProviderTokenUpdates` to one replaced more often than every
/// 20 minutes, so the refresh time must lie between the two.
actor APNsProviderToken {
    /// The shortest and longest allowed refresh times.
    static let allowedRefresh: ClosedRange<Int64> = (20 * 60_000)...(60 * 60_000 - 60_000)

    private let keys: JWTKeyCollection
    private let keyId: String
    private let teamId: String
    private let refreshAfterMillis: Int64
    private let clock: any SignalServerClock
    private var cached: CachedCredential?
    /// How many tokens were signed (tests check reuse with it).
    private(set) var signedCount = 0

    struct Claims: JWTPayload {
        var iss: String
        var iat: Int64
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// - Parameter refreshAfterMillis: clamped to ``allowedRefresh``.
    init(
        privateKeyPEM: String, keyId: String, teamId: String, refreshAfterMillis: Int64,
        clock: any SignalServerClock
    ) async throws {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(pem: privateKeyPEM), kid: JWKIdentifier(string: keyId))
        self.keys = keys
        self.keyId = keyId
        self.teamId = teamId
        self.refreshAfterMillis = min(
            max(refreshAfterMillis, Self.allowedRefresh.lowerBound), Self.allowedRefresh.upperBound)
        self.clock = clock
    }

    /// The token to send now: the cached one while it is young enough, else a new one.
    func current() async throws -> String {
        let now = clock.nowMillis()
        if let cached, cached.isUsable(now: now) { return cached.value }
        let issuedAt = now / 1000 * 1000
        let token = try await keys.sign(
            Claims(iss: teamId, iat: issuedAt / 1000), kid: JWKIdentifier(string: keyId))
        cached = CachedCredential(value: token, issuedAt: issuedAt, replaceAt: issuedAt + refreshAfterMillis)
        signedCount += 1
        return token
    }

    /// Forgets `token` when APNs said it expired or is invalid, so that the next request signs a new one.
    func reject(_ token: String) {
        if cached?.value == token { cached = nil }
    }
}
