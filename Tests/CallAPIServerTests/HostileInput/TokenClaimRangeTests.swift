import CallAPIServer
import CallAPIServerCore
import CallAPISignalProtocol
import JWTKit
import Testing

/// Tokens signed with the server's own key but carrying claims it cannot represent are refused, never a crash.
@Suite struct TokenClaimRangeTests {
    let secret = "a-test-secret-that-is-long-enough-0123456789"

    /// A payload with raw numeric claims, as anyone holding the key (or a buggy business server) can sign.
    struct RawClaims: JWTPayload {
        var sub: String
        var exp: Double
        var iat: Double
        var scope: String?
        var chn: String?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    func sign(_ claims: RawClaims) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }

    @Test(arguments: [1e16, -1e16, 1e300, -1e300, 9.3e15, 253_402_300_800])
    func loginTokensWithAnUnrepresentableExpiryAreRefused(exp: Double) async throws {
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret))
        let token = try await sign(RawClaims(sub: "1001", exp: exp, iat: 1_700_000_000))
        guard case .invalid(.invalidToken, let message) = await authority.checkLoginToken(token) else {
            Issue.record("exp \(exp) was accepted")
            return
        }
        #expect(message.contains("\"exp\""))
    }

    @Test(arguments: [1e16, -1e300])
    func channelTokensWithAnUnrepresentableExpiryAreRefused(exp: Double) async throws {
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret))
        let token = try await sign(RawClaims(sub: "1001", exp: exp, iat: 1_700_000_000, scope: "rtc", chn: "room-1"))
        guard case .invalid(.invalidToken, let message) = await authority.checkChannelToken(token) else {
            Issue.record("exp \(exp) was accepted")
            return
        }
        #expect(message.contains("\"exp\""))
    }

    @Test func anUnrepresentableIssueTimeIsRefused() async throws {
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret))
        let token = try await sign(RawClaims(sub: "1001", exp: 1_900_000_000, iat: 1e300))
        guard case .invalid(.invalidToken, let message) = await authority.checkLoginToken(token) else {
            Issue.record("iat 1e300 was accepted")
            return
        }
        #expect(message.contains("\"iat\""))
    }

    @Test func aFractionalExpiryInRangeIsAcceptedToTheMillisecond() async throws {
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret))
        let token = try await sign(RawClaims(sub: "1001", exp: 1_900_000_000.25, iat: 1_700_000_000))
        #expect(await authority.checkLoginToken(token) == .valid(userId: "1001", expiresAt: 1_900_000_000_250))
    }

    @Test(arguments: ["01001", "+1", " 1", "00", "1001 "])
    func nonCanonicalNumericSubjectsAreNeitherIssuedNorAccepted(userId: String) async throws {
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret))
        await #expect(throws: TokenIssueError.invalidUserId(userId)) {
            try await authority.issue(userId: userId, ttlSeconds: 60)
        }
        let token = try await sign(RawClaims(sub: userId, exp: 1_900_000_000, iat: 1_700_000_000))
        guard case .invalid(.invalidToken, _) = await authority.checkLoginToken(token) else {
            Issue.record("subject \"\(userId)\" was accepted")
            return
        }
    }

    @Test func canonicalNumbersAndNamesAreValidUserIds() {
        #expect(SignalProtocol.isValidUserId("0"))
        #expect(SignalProtocol.isValidUserId("1001"))
        #expect(SignalProtocol.isValidUserId("007-agent"))
        #expect(!SignalProtocol.isValidUserId("007"))
    }

    @Test func userIdsAreOneTo64CharactersOfTheirAlphabet() {
        #expect(SignalProtocol.isValidUserId(String(repeating: "a", count: 64)))
        #expect(SignalProtocol.isValidUserId("A.b_c-9"))
        for refused in ["", String(repeating: "a", count: 65), "é", "a b", "a/b", "a\u{0}", "1001\u{1F600}"] {
            #expect(!SignalProtocol.isValidUserId(refused), "\(refused.debugDescription)")
        }
    }
}
