import CallAPIServerCore
import Hummingbird

/// `POST /v1/tokens`: an app's business server asks for a user's token, with the admin key.
///
/// Request: `Authorization: Bearer <admin key>`, body `{"userId":"1001","ttl":3600}` (ttl optional, seconds;
/// add `"channel":"room-1"` for an RTC token). Response: `{"token":…,"userId":…,"expiresAt":…}`.
struct TokenEndpoint: Sendable {
    let authority: TokenAuthority
    let adminKey: String?
    let maxTTLSeconds: Int
    let jsonBody: AdminJSONBody

    static let path: RouterPath = "/v1/tokens"
    static let defaultTTLSeconds = 3600

    struct Body: Decodable {
        var userId: String
        var ttl: Int?
        var channel: String?
    }

    func register(on router: Router<BasicRequestContext>) {
        router.post(Self.path) { request, context -> IssuedToken in
            try await issue(request, context: context)
        }
    }

    private func issue(_ request: Request, context: BasicRequestContext) async throws -> IssuedToken {
        try AdminAuthorization(adminKey: adminKey).check(request, endpoint: "the token endpoint")
        let body = try await jsonBody.decode(Body.self, from: request, example: "{\"userId\":\"1001\",\"ttl\":3600}")
        let ttl = body.ttl ?? Self.defaultTTLSeconds
        guard ttl > 0, ttl <= maxTTLSeconds else {
            throw HTTPError(.badRequest, message: "\"ttl\" must be 1 to \(maxTTLSeconds) seconds")
        }
        do {
            return try await authority.issue(userId: body.userId, ttlSeconds: ttl, channel: body.channel)
        } catch let error as TokenIssueError {
            throw HTTPError(error == .cannotSign ? .conflict : .badRequest, message: error.description)
        }
    }
}

extension IssuedToken: ResponseEncodable {}
