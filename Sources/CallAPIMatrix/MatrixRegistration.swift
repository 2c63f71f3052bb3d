import AsyncHTTPClient
import Crypto
import Foundation

/// Accounts for development and tests on a homeserver you run: Synapse's shared-secret admin API
/// (`/_synapse/admin/v1/register`: fetch a nonce, then post the user with
/// `HMAC-SHA1(secret, nonce \0 user \0 password \0 "notadmin")`). A user that exists already logs in with
/// its password instead. Production apps get their users' access tokens from their own login flow.
public enum MatrixRegistration {
    private struct Nonce: Decodable { var nonce: String }

    private struct Request: Encodable {
        var nonce: String
        var username: String
        var password: String
        var admin = false
        var mac: String
    }

    private struct Login: Encodable {
        struct Identifier: Encodable {
            var type = "m.id.user"
            var user: String
        }
        var type = "m.login.password"
        var identifier: Identifier
        var password: String
    }

    private struct Answer: Decodable {
        var userId: String
        var accessToken: String
        var deviceId: String

        enum CodingKeys: String, CodingKey {
            case userId = "user_id"
            case accessToken = "access_token"
            case deviceId = "device_id"
        }
    }

    /// The password this registration gives a CallAPI user (development servers only).
    public static func password(of user: String) -> String { "callapi-password-\(user)" }

    /// The shared-secret registration MAC, lowercase hex.
    static func mac(secret: String, nonce: String, username: String, password: String, admin: Bool = false)
        -> String
    {
        let message = [nonce, username, password, admin ? "admin" : "notadmin"].joined(separator: "\0")
        let code = HMAC<Insecure.SHA1>.authenticationCode(
            for: Data(message.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return code.map { String(format: "%02x", $0) }.joined()
    }

    /// Registers (or logs in) CallAPI user `user` (decimal id) as `@u<user>` on the homeserver at `baseURL`,
    /// whose `registration_shared_secret` is `secret`; each call is a new device.
    public static func account(
        user: String, secret: String, baseURL: String, httpClient: HTTPClient = .shared
    ) async throws -> MatrixAccount {
        try await account(user: user, secret: secret, http: MatrixHTTP(http: httpClient, baseURL: baseURL))
    }

    static func account(user: String, secret: String, http: MatrixHTTP) async throws -> MatrixAccount {
        let username = "u\(user)"
        let password = password(of: user)
        let nonce = try await http.call(.GET, "/_synapse/admin/v1/register", as: Nonce.self).nonce
        let request = Request(
            nonce: nonce, username: username, password: password,
            mac: mac(secret: secret, nonce: nonce, username: username, password: password))
        let answer: Answer
        do {
            answer = try await http.call(.POST, "/_synapse/admin/v1/register", body: request, as: Answer.self)
        } catch MatrixClientError.http(_, let body) where body.contains("M_USER_IN_USE") {
            answer = try await http.call(
                .POST, "/_matrix/client/v3/login",
                body: Login(identifier: .init(user: username), password: password), as: Answer.self)
        }
        return MatrixAccount(userId: answer.userId, accessToken: answer.accessToken, deviceId: answer.deviceId)
    }
}
