import CallAPIServerCore
import CallAPISignalProtocol
import JWTKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A token the authority issued.
public struct IssuedToken: Sendable, Equatable, Codable {
    public var token: String
    public var userId: String
    /// Milliseconds since 1970.
    public var expiresAt: Int64
    /// The RTC channel, for RTC tokens.
    public var channel: String?
}

/// Why a signing key cannot be used.
public enum SigningKeyError: Error, Equatable, CustomStringConvertible {
    case secretTooShort(Int)

    public var description: String {
        switch self {
        case .secretTooShort(let bytes):
            "the HS256 secret is \(bytes) bytes; use at least \(TokenAuthority.minimumSecretBytes) (e.g. openssl rand -hex 32)"
        }
    }
}

/// Why a token could not be issued.
public enum TokenIssueError: Error, Equatable, CustomStringConvertible {
    case invalidUserId(String)
    case invalidTTL(Int)
    case cannotSign
    case invalidChannel(String)

    public var description: String {
        switch self {
        case .invalidUserId(let id): "invalid user id \"\(id)\": use 1-64 characters of A-Z a-z 0-9 . _ -"
        case .invalidTTL(let ttl): "invalid ttl \(ttl): use 1 to \(TokenAuthority.maxTTLSeconds) seconds"
        case .cannotSign: "this server only has an ES256 public key; it can check tokens but not issue them"
        case .invalidChannel(let channel):
            "invalid channel \"\(channel)\": use 1-64 characters of A-Z a-z 0-9 . _ - (or * for any channel)"
        }
    }
}

/// Issues and checks the server's JWTs.
public final class TokenAuthority: Sendable {
    /// The shortest HS256 secret accepted: as long as the SHA-256 output.
    public static let minimumSecretBytes = 32
    /// The longest lifetime a token may be issued for: 30 days.
    public static let maxTTLSeconds = TokenLifetime.maxSeconds
    /// How far ahead of this server's clock a token's `nbf` may be (another issuer's clock may run ahead).
    static let notBeforeLeewayMillis: Int64 = 5_000

    private let keys: JWTKeyCollection
    private let clock: any SignalServerClock
    /// Whether this authority can issue tokens (not with an ES256 public key only).
    public let canIssue: Bool
    /// HS256 or ES256.
    public let algorithm: String

    private init(keys: JWTKeyCollection, clock: any SignalServerClock, canIssue: Bool, algorithm: String) {
        self.keys = keys
        self.clock = clock
        self.canIssue = canIssue
        self.algorithm = algorithm
    }

    /// An authority for `key`. Throws if a PEM key cannot be read.
    public static func make(key: SigningKey, clock: any SignalServerClock = SystemServerClock()) async throws
        -> TokenAuthority
    {
        let keys = JWTKeyCollection()
        switch key {
        case .hs256(let secret):
            guard secret.utf8.count >= minimumSecretBytes else {
                throw SigningKeyError.secretTooShort(secret.utf8.count)
            }
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        case .es256PrivateKey(let pem):
            await keys.add(ecdsa: try ES256PrivateKey(pem: pem))
        case .es256PublicKey(let pem):
            await keys.add(ecdsa: try ES256PublicKey(pem: pem))
        }
        let canIssue = if case .es256PublicKey = key { false } else { true }
        return TokenAuthority(keys: keys, clock: clock, canIssue: canIssue, algorithm: key.algorithm)
    }

    /// A login token for `userId` valid for `ttlSeconds`, or an RTC token for `channel` when one is given
    /// (`"*"` makes a token for any channel, which servers accept only with `--allow-any-channel-tokens`).
    public func issue(userId: String, ttlSeconds: Int, channel: String? = nil) async throws -> IssuedToken {
        guard SignalProtocol.isValidUserId(userId) else { throw TokenIssueError.invalidUserId(userId) }
        guard ttlSeconds > 0, ttlSeconds <= Self.maxTTLSeconds else { throw TokenIssueError.invalidTTL(ttlSeconds) }
        if let channel, channel != ChannelProtocol.anyChannel, !ChannelProtocol.isValidChannel(channel) {
            throw TokenIssueError.invalidChannel(channel)
        }
        guard canIssue else { throw TokenIssueError.cannotSign }
        let now = clock.nowMillis()
        let expiresAt = now + Int64(ttlSeconds) * 1000
        let claims = SignalTokenClaims(
            sub: .init(value: userId),
            exp: .init(value: Date(timeIntervalSince1970: Double(expiresAt) / 1000)),
            iat: .init(value: Date(timeIntervalSince1970: Double(now) / 1000)),
            nbf: .init(value: Date(timeIntervalSince1970: Double(now) / 1000)),
            scope: channel == nil ? SignalTokenClaims.signalScope : SignalTokenClaims.rtcScope,
            chn: channel)
        let token = try await keys.sign(claims)
        return IssuedToken(token: token, userId: userId, expiresAt: expiresAt, channel: channel)
    }

    /// Checks a login token's signature and claims; expiry is left to the hub.
    public func checkLoginToken(_ token: String) async -> TokenCheck {
        let claims: SignalTokenClaims
        switch await verify(token) {
        case .success(let verified): claims = verified
        case .failure(let refusal): return .invalid(.invalidToken, refusal.message)
        }
        switch TokenClaimRules.login(
            sub: claims.sub.value, exp: claims.exp.value.timeIntervalSince1970,
            iat: claims.iat.value.timeIntervalSince1970, scope: claims.scope)
        {
        case .success(let login): return .valid(userId: login.userId, expiresAt: login.expiresAt)
        case .failure(let refusal): return .invalid(.invalidToken, refusal.message)
        }
    }

    /// Checks an RTC token's signature and claims (scope `rtc`, a subject, a channel); whether they match the
    /// join, and expiry, are left to the channel hub.
    public func checkChannelToken(_ token: String) async -> ChannelTokenCheck {
        let claims: SignalTokenClaims
        switch await verify(token) {
        case .success(let verified): claims = verified
        case .failure(let refusal): return .invalid(.invalidToken, refusal.message)
        }
        switch TokenClaimRules.channel(
            sub: claims.sub.value, exp: claims.exp.value.timeIntervalSince1970,
            iat: claims.iat.value.timeIntervalSince1970, scope: claims.scope, chn: claims.chn)
        {
        case .success(let join):
            return .valid(
                userId: join.userId, channel: join.channel, expiresAt: join.expiresAt, issuedAt: join.issuedAt)
        case .failure(let refusal): return .invalid(.invalidToken, refusal.message)
        }
    }

    private typealias Refusal = TokenClaimRules.Refusal

    private func verify(_ token: String) async -> Result<SignalTokenClaims, Refusal> {
        do {
            let claims = try await keys.verify(token, as: SignalTokenClaims.self)
            // Against this server's clock: a token from the future is refused until its time.
            if let notBefore = claims.nbf?.value.timeIntervalSince1970,
                notBefore * 1000 > Double(clock.nowMillis() + Self.notBeforeLeewayMillis)
            {
                return .failure(Refusal(message: "the token is not valid yet (\"nbf\" is in the future)"))
            }
            return .success(claims)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            return .failure(Refusal(message: "the token's signature does not match this server's key"))
        } catch let error as JWTError where error.errorType == .malformedToken {
            if let claim = MissingClaim.name(in: token) {
                return .failure(Refusal(message: "the token has no \"\(claim)\" claim"))
            }
            return .failure(Refusal(message: "the token is not a well-formed JWT"))
        } catch {
            return .failure(Refusal(message: "the token was refused: \(error)"))
        }
    }
}
