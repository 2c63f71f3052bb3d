import CallAPIServerCore
import JWTKit

/// The APNs provider token: an ES256 JWT (`kid` = key id, `iss` = team id, `iat`) reused for every request and
/// replaced after ``refreshAfterMillis``.
///
/// Apple refuses a token older than 60 minutes (403 `ExpiredProviderToken`) and answers 429
/// `TooManyProviderTokenUpdates` to one replaced more often than every 20 minutes (docs/push.md). So:
/// - one token at a time: requests that arrive while a token is being signed wait for that signing;
/// - a new token is signed at most once per ``minimumReplacementMillis`` for this key (a new key is a new
///   instance, and starts afresh). A 403 inside that window keeps the token refused: requests fail with the
///   reason (``Refusal``) until the window has passed, instead of signing token after token.
actor APNsProviderToken {
    /// The shortest and longest allowed refresh times.
    static let allowedRefresh: ClosedRange<Int64> = (20 * 60_000)...(60 * 60_000 - 60_000)
    /// Apple's limit: no new provider token more often than this.
    static let minimumReplacementMillis: Int64 = 20 * 60_000

    /// Where the token stands.
    private enum Phase {
        /// None signed yet.
        case unsigned
        /// Being signed; requests meanwhile wait for it.
        case signing(Task<CachedCredential, any Error>)
        /// In use.
        case signed(CachedCredential)
        /// APNs refused it (`reason`) before a new one may be signed.
        case refused(CachedCredential, reason: String)
    }

    /// Why no token can be sent now.
    struct Refusal: Error, Equatable, CustomStringConvertible {
        var description: String
    }

    private let keys: JWTKeyCollection
    private let keyId: String
    private let teamId: String
    private let refreshAfterMillis: Int64
    private let clock: any SignalServerClock
    private var phase = Phase.unsigned
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

    /// The token to send now: the current one while it is young enough, else a new one. Throws ``Refusal`` while
    /// APNs's refusal of the current token stands, or the signing's error.
    func current() async throws -> String {
        let now = clock.nowMillis()
        switch phase {
        case .signed(let credential) where credential.isUsable(now: now):
            return credential.value
        case .refused(let credential, let reason) where now - credential.issuedAt < Self.minimumReplacementMillis:
            let waitSeconds = (credential.issuedAt + Self.minimumReplacementMillis - now + 999) / 1000
            throw Refusal(
                description: "APNs refused the provider token (\(reason)); Apple allows a new one once per 20 "
                    + "minutes, so pushes fail for \(waitSeconds) s more")
        case .signing(let task):
            return try await task.value.value
        case .unsigned, .signed, .refused:
            let task = Task { try await self.sign(now: now) }
            phase = .signing(task)
            do {
                let credential = try await task.value
                phase = .signed(credential)
                return credential.value
            } catch {
                phase = .unsigned
                throw error
            }
        }
    }

    /// APNs refused `token` with a 403 (`reason`). Returns whether the request may be retried with a new token:
    /// only when `token` is no longer the current one, or is old enough to be replaced. Otherwise the refusal
    /// stands until the token is ``minimumReplacementMillis`` old.
    func reject(_ token: String, reason: String) -> Bool {
        let now = clock.nowMillis()
        switch phase {
        case .signed(let credential) where credential.value == token:
            if now - credential.issuedAt >= Self.minimumReplacementMillis {
                phase = .unsigned
                return true
            }
            phase = .refused(credential, reason: reason)
            return false
        case .refused(let credential, _) where credential.value == token:
            return false
        case .unsigned, .signing, .signed, .refused:
            return true  // already replaced (or being replaced): a retry uses the newer token
        }
    }

    private func sign(now: Int64) async throws -> CachedCredential {
        let issuedAt = now / 1000 * 1000
        let token = try await keys.sign(
            Claims(iss: teamId, iat: issuedAt / 1000), kid: JWKIdentifier(string: keyId))
        signedCount += 1
        return CachedCredential(value: token, issuedAt: issuedAt, replaceAt: issuedAt + refreshAfterMillis)
    }
}
