import CallAPIServerCore
import CallAPISignalProtocol
import Hummingbird

/// The operator's view of the call ledger, with the admin key:
///
/// - `GET /v1/users/{id}/calls?outcome=missed,busy&role=callee&since=MS&until=MS&limit=50&cursor=C` →
///   `{"calls":[...],"nextCursor":"C"|null}`, newest first (docs/ledger.md).
struct CallHistoryEndpoint: Sendable {
    let ledger: CallLedger?
    let authorization: AdminAuthorization

    struct Page: ResponseEncodable {
        var calls: [CallRecord]
        var nextCursor: String?

        enum CodingKeys: String, CodingKey { case calls, nextCursor }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(calls, forKey: .calls)
            // Always present: null on the last page.
            try container.encode(nextCursor, forKey: .nextCursor)
        }
    }

    func register(on router: Router<BasicRequestContext>) {
        router.get("/v1/users/:user/calls") { request, context -> Page in
            try authorization.check(request, endpoint: "the call history endpoint")
            guard let ledger else {
                throw HTTPError(.notFound, message: "the call ledger is off on this server (--ledger)")
            }
            guard let user = context.parameters.get("user"), SignalProtocol.isValidUserId(user) else {
                throw HTTPError(.badRequest, message: "the user id must be 1-64 characters of A-Z a-z 0-9 . _ -")
            }
            var parameters: [String: String] = [:]
            for (key, value) in request.uri.queryParameters {
                parameters[String(key)] = String(value)
            }
            let query: CallQuery
            do {
                query = try CallQueryParameters.query(userId: user, parameters)
            } catch {
                throw HTTPError(.badRequest, message: "\(error)")
            }
            do {
                let page = try await ledger.calls(query)
                return Page(calls: page.calls, nextCursor: page.nextCursor?.description)
            } catch {
                throw HTTPError(.serviceUnavailable, message: "the call ledger could not be read: \(error)")
            }
        }
    }
}
