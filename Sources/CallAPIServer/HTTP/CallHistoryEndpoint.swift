import CallAPIServerCore
import CallAPISignalProtocol
import Hummingbird

/// The operator's view of the call ledger, with the admin key:
///
/// - `GET /v1/users/{id}/calls?outcome=missed,busy&role=callee&since=MS&until=MS&limit=50&cursor=C` →
///   `{"calls":[...],"nextCursor":"C"|null}`, newest first (docs/ledger.md).
/// - `GET /v1/calls/{callId}/timeline` → the call's record and its devices' reports on the server's clock
///   (``CallTimeline``, docs/timeline.md); 404 when the ledger has neither.
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
        router.get("/v1/calls/:call/timeline") { request, context -> CallTimeline in
            try authorization.check(request, endpoint: "the call timeline endpoint")
            guard let ledger else {
                throw HTTPError(.notFound, message: "the call ledger is off on this server (--ledger)")
            }
            guard let callId = context.parameters.get("call"), !callId.isEmpty, callId.utf8.count <= 128 else {
                throw HTTPError(.badRequest, message: "the call id must be 1-128 characters")
            }
            let found: (record: CallRecord?, reports: [StoredCallReport])
            do {
                found = try await ledger.timeline(callId: callId)
            } catch {
                throw HTTPError(.serviceUnavailable, message: "the call ledger could not be read: \(error)")
            }
            guard found.record != nil || !found.reports.isEmpty else {
                throw HTTPError(.notFound, message: "the ledger has no call \(callId)")
            }
            return CallTimeline(callId: callId, record: found.record, reports: found.reports)
        }
    }
}

extension CallTimeline: ResponseEncodable {}
