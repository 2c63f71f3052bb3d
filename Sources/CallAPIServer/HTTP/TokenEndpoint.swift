import Hummingbird

/// `POST /v1/tokens`: an app's business server asks for a user's token, with the admin key.
///
/// Request: `Authorization: Bearer <admin key>`, body `{"userId":"1001","ttl":3600}` (ttl optional, seconds;
/// add `"channel":"room-1"` for an RTC token). Response: `{"token":…,"userId":…,"expiresAt":…}`.
struct TokenEndpoint: Sendable {
    let authority: TokenAuthority
    let adminKey: String?
    let maxTTLSeconds: Int

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
        guard let adminKey else {
            throw HTTPError(.forbidden, message: "the token endpoint is disabled: start the server with --admin-key")
        }
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            constantTimeEquals(String(header.dropFirst("Bearer ".count)), adminKey)
        else {
            throw HTTPError(.unauthorized, message: "send the admin key as \"Authorization: Bearer <key>\"")
        }
        let body: Body
        do {
            body = try await request.decode(as: Body.self, context: context)
        } catch {
            throw HTTPError(.badRequest, message: "the body must be JSON like {\"userId\":\"1001\",\"ttl\":3600}")
        }
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

/// Compares without stopping at the first difference, so timing does not reveal the key.
func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    var difference = UInt8(x.count == y.count ? 0 : 1)
    for index in 0..<max(x.count, y.count) {
        difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
    }
    return difference == 0
}
