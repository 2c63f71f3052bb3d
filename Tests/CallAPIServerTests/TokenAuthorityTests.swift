import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import Foundation
import JWTKit
import Testing

/// Issuing and checking tokens, HS256 and ES256.
@Suite struct TokenAuthorityTests {
    let secret = "a-test-secret-that-is-long-enough-0123456789"

    @Test func hs256TokensRoundTrip() async throws {
        let clock = TestClock()
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret), clock: clock)
        let issued = try await authority.issue(userId: "1001", ttlSeconds: 60)
        #expect(issued.expiresAt == clock.nowMillis() + 60_000)
        #expect(await authority.checkLoginToken(issued.token) == .valid(userId: "1001", expiresAt: issued.expiresAt))
    }

    @Test func es256PrivateKeySignsAndAPublicKeyOnlyChecks() async throws {
        let key = ES256PrivateKey()
        let signer = try await TokenAuthority.make(key: .es256PrivateKey(pem: key.pemRepresentation))
        let checker = try await TokenAuthority.make(key: .es256PublicKey(pem: key.publicKey.pemRepresentation))
        let issued = try await signer.issue(userId: "1001", ttlSeconds: 60)
        #expect(signer.algorithm == "ES256")
        guard case .valid(let user, _) = await checker.checkLoginToken(issued.token) else {
            Issue.record("ES256 token refused")
            return
        }
        #expect(user == "1001")
        await #expect(throws: TokenIssueError.cannotSign) { try await checker.issue(userId: "1001", ttlSeconds: 60) }
        let hmac = try await TokenAuthority.make(key: .hs256(secret: secret))
        #expect(
            await checker.checkLoginToken(try await hmac.issue(userId: "1001", ttlSeconds: 60).token)
                != .valid(userId: "1001", expiresAt: 0))
    }

    @Test func shortSecretsAndBadRequestsAreRefused() async throws {
        await #expect(throws: SigningKeyError.secretTooShort(5)) {
            try await TokenAuthority.make(key: .hs256(secret: "short"))
        }
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret))
        await #expect(throws: TokenIssueError.invalidUserId("no spaces")) {
            try await authority.issue(userId: "no spaces", ttlSeconds: 60)
        }
        await #expect(throws: TokenIssueError.invalidTTL(0)) {
            try await authority.issue(userId: "1001", ttlSeconds: 0)
        }
    }

    @Test func rtcTokensAreScopedToAChannelAndCannotLogIn() async throws {
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret))
        let rtc = try await authority.issue(userId: "1001", ttlSeconds: 60, channel: "room-1")
        #expect(rtc.channel == "room-1")
        guard case .invalid(.invalidToken, _) = await authority.checkLoginToken(rtc.token) else {
            Issue.record("an RTC token logged in")
            return
        }
    }

    @Test func tokensCarryNotBeforeAndOneFromTheFutureIsRefusedUntilItsTime() async throws {
        let clock = TestClock()
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret), clock: clock)
        let now = try await authority.issue(userId: "1001", ttlSeconds: 600, channel: "room")
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        let claims = try await keys.verify(now.token, as: SignalTokenClaims.self)
        #expect(claims.nbf?.value == claims.iat.value)

        // Issued by a clock a minute ahead: not valid here yet.
        let ahead = TestClock()
        ahead.advance(seconds: 60)
        let future = try await TokenAuthority.make(key: .hs256(secret: secret), clock: ahead)
            .issue(userId: "1001", ttlSeconds: 600, channel: "room")
        guard case .invalid(.invalidToken, let message) = await authority.checkChannelToken(future.token) else {
            Issue.record("a token from the future was accepted")
            return
        }
        #expect(message.contains("not valid yet"))
        clock.advance(seconds: 60)
        guard case .valid = await authority.checkChannelToken(future.token) else {
            Issue.record("the token was still refused at its time")
            return
        }
    }

    @Test func channelTokensCarryTheirChannelAndLoginTokensCannotJoin() async throws {
        let clock = TestClock()
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret), clock: clock)
        let rtc = try await authority.issue(userId: "1001", ttlSeconds: 60, channel: "room-1")
        #expect(
            await authority.checkChannelToken(rtc.token)
                == .valid(userId: "1001", channel: "room-1", expiresAt: rtc.expiresAt, issuedAt: clock.nowMillis()))
        let any = try await authority.issue(userId: "1001", ttlSeconds: 60, channel: "*")
        #expect(
            await authority.checkChannelToken(any.token)
                == .valid(userId: "1001", channel: "*", expiresAt: any.expiresAt, issuedAt: clock.nowMillis()))
        let login = try await authority.issue(userId: "1001", ttlSeconds: 60)
        guard case .invalid(.invalidToken, let message) = await authority.checkChannelToken(login.token) else {
            Issue.record("a login token passed as a channel token")
            return
        }
        #expect(message.contains("signal"))
        guard case .invalid(.invalidToken, _) = await authority.checkChannelToken("garbage") else {
            Issue.record("garbage passed")
            return
        }
        await #expect(throws: TokenIssueError.invalidChannel("**")) {
            try await authority.issue(userId: "1001", ttlSeconds: 60, channel: "**")
        }
    }

    /// A token signed with the server's key whose payload leaves out a claim the server requires.
    struct ClaimsWithoutIssueTime: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    @Test func aTokenWithoutIatIsRefusedNamingTheMissingClaim() async throws {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        let token = try await keys.sign(
            ClaimsWithoutIssueTime(sub: .init(value: "1001"), exp: .init(value: .now.addingTimeInterval(60))))
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret))
        guard case .invalid(.invalidToken, let message) = await authority.checkLoginToken(token) else {
            Issue.record("a token without iat was accepted")
            return
        }
        #expect(message == "the token has no \"iat\" claim")
        guard case .invalid(.invalidToken, let channelMessage) = await authority.checkChannelToken(token) else {
            Issue.record("a channel token without iat was accepted")
            return
        }
        #expect(channelMessage == "the token has no \"iat\" claim")
    }
}
