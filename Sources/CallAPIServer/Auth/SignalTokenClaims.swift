import CallAPIServerCore
import JWTKit

/// The claims of a token the server issues: a login token for signaling, or an RTC token for one channel.
public struct SignalTokenClaims: JWTPayload, Equatable {
    /// The user id.
    public var sub: SubjectClaim
    /// When the token expires.
    public var exp: ExpirationClaim
    /// When it was issued.
    public var iat: IssuedAtClaim
    /// Not valid before this time (the server's tokens: when they were issued). Optional: other issuers may leave
    /// it out.
    public var nbf: NotBeforeClaim?
    /// `signal` (log in to the signaling server) or `rtc` (join the media channel `chn`). Absent means signal.
    public var scope: String?
    /// The RTC channel an `rtc` token is for.
    public var chn: String?

    /// The scope of login tokens.
    public static let signalScope = TokenClaimRules.signalScope
    /// The scope of RTC tokens.
    public static let rtcScope = TokenClaimRules.rtcScope

    public init(
        sub: SubjectClaim, exp: ExpirationClaim, iat: IssuedAtClaim, nbf: NotBeforeClaim? = nil, scope: String?,
        chn: String?
    ) {
        self.sub = sub
        self.exp = exp
        self.iat = iat
        self.nbf = nbf
        self.scope = scope
        self.chn = chn
    }

    /// Signature checks only; the hub checks expiry against its own clock so tests can move time.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}
