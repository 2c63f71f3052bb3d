import AsyncHTTPClient
import CallAPIServerCore
import JWTKit
import NIOCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The FCM OAuth2 access token, got with the service account's RS256-signed JWT from its token endpoint and
/// reused until a minute before it expires. One exchange at a time: callers during an exchange wait for it.
actor FCMAccessToken {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// A token is replaced this long before it expires.
    static let marginMillis: Int64 = 60_000

    private let account: FCMServiceAccount
    private let tokenURL: String
    private let keys: JWTKeyCollection
    private let client: HTTPClient
    private let clock: any SignalServerClock
    private let timeoutMillis: Int64
    private var cached: CachedCredential?
    private var exchange: Task<CachedCredential, any Error>?
    /// How many exchanges were made (tests check caching with it).
    private(set) var exchangeCount = 0

    struct Assertion: JWTPayload {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int64
        var exp: Int64
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    struct TokenAnswer: Decodable {
        var access_token: String
        var expires_in: Int64
    }

    struct ExchangeError: Error, CustomStringConvertible {
        var description: String
    }

    init(
        account: FCMServiceAccount, tokenURL: String, client: HTTPClient, clock: any SignalServerClock,
        timeoutMillis: Int64
    ) async throws {
        let keys = JWTKeyCollection()
        await keys.add(
            rsa: try Insecure.RSA.PrivateKey(pem: account.privateKey), digestAlgorithm: .sha256,
            kid: JWKIdentifier(string: account.privateKeyId))
        self.keys = keys
        self.account = account
        self.tokenURL = tokenURL
        self.client = client
        self.clock = clock
        self.timeoutMillis = timeoutMillis
    }

    /// The access token to use now.
    func current() async throws -> String {
        if let cached, cached.isUsable(now: clock.nowMillis()) { return cached.value }
        if let exchange { return try await exchange.value.value }
        let task = Task { try await self.exchangeToken() }
        exchange = task
        defer { exchange = nil }
        let credential = try await task.value
        cached = credential
        return credential.value
    }

    /// Forgets `token` after FCM refused it (401), so the next push exchanges a new one.
    func reject(_ token: String) {
        if cached?.value == token { cached = nil }
    }

    private func exchangeToken() async throws -> CachedCredential {
        exchangeCount += 1
        let now = clock.nowMillis()
        let iat = now / 1000
        let assertion = try await keys.sign(
            Assertion(iss: account.clientEmail, scope: Self.scope, aud: tokenURL, iat: iat, exp: iat + 3600),
            kid: JWKIdentifier(string: account.privateKeyId))
        var request = HTTPClientRequest(url: tokenURL)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(
            ByteBuffer(
                string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"))
        let response = try await client.execute(request, timeout: .milliseconds(timeoutMillis))
        let body = try await response.body.collect(upTo: 64 * 1024)
        guard response.status == .ok else {
            throw ExchangeError(description: "the token endpoint answered \(response.status.code)")
        }
        let answer = try JSONDecoder().decode(TokenAnswer.self, from: Data(body.readableBytesView))
        let lifetime = max(answer.expires_in * 1000 - Self.marginMillis, 0)
        return CachedCredential(value: answer.access_token, issuedAt: now, replaceAt: now + lifetime)
    }
}

/// The fields of a Google service-account key file (JSON) that FCM needs.
public struct FCMServiceAccount: Sendable, Equatable, Decodable {
    public var projectId: String
    public var clientEmail: String
    public var privateKeyId: String
    /// PEM (PKCS#8) RSA key.
    public var privateKey: String
    public var tokenURI: String

    enum CodingKeys: String, CodingKey {
        case projectId = "project_id"
        case clientEmail = "client_email"
        case privateKeyId = "private_key_id"
        case privateKey = "private_key"
        case tokenURI = "token_uri"
    }

    public init(projectId: String, clientEmail: String, privateKeyId: String, privateKey: String, tokenURI: String) {
        self.projectId = projectId
        self.clientEmail = clientEmail
        self.privateKeyId = privateKeyId
        self.privateKey = privateKey
        self.tokenURI = tokenURI
    }

    /// Reads a key file's JSON.
    public init(json: String) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(json.utf8))
    }
}
