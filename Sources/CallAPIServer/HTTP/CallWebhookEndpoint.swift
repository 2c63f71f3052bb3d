import CallAPIServerCore
import Hummingbird
import NIOCore

/// Replay of the call webhook events for the operator, with the admin key:
///
/// - `GET /v1/webhooks/events?since=SEQ&limit=N` → `{"events":[{"deliveredAt":MS|null,"attempts":N,
///   "payload":{...}}],"nextSince":SEQ|null}`: the stored events after `since` by sequence number, delivered or
///   not, each with the exact body that was (or will be) posted (docs/webhooks.md).
struct CallWebhookEndpoint: Sendable {
    let webhooks: CallWebhooks?
    let authorization: AdminAuthorization

    /// The largest page.
    static let maxLimit = 1000

    func register(on router: Router<BasicRequestContext>) {
        router.get("/v1/webhooks/events") { request, _ -> Response in
            try authorization.check(request, endpoint: "the webhook replay endpoint")
            guard let webhooks else {
                throw HTTPError(
                    .notFound, message: "call webhooks are off on this server (--call-webhook-url, with the ledger on)")
            }
            let parameters = request.uri.queryParameters
            var since: Int64 = 0
            if let text = parameters["since"] {
                guard let value = Int64(String(text)), value >= 0 else {
                    throw HTTPError(.badRequest, message: "\"since\" must be a sequence number (0 or more)")
                }
                since = value
            }
            var limit = 100
            if let text = parameters["limit"] {
                guard let value = Int(String(text)), (1...Self.maxLimit).contains(value) else {
                    throw HTTPError(.badRequest, message: "\"limit\" must be 1 to \(Self.maxLimit)")
                }
                limit = value
            }
            let events: [StoredCallEvent]
            do {
                events = try await webhooks.store.webhookEvents(since: since, limit: limit)
            } catch {
                throw HTTPError(.serviceUnavailable, message: "the webhook queue could not be read: \(error)")
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: Self.page(events, limit: limit))))
        }
    }

    /// The page's JSON; each payload is the stored body as it is, so replayed bytes equal the posted ones.
    static func page(_ events: [StoredCallEvent], limit: Int) -> String {
        let items = events.map { event in
            "{\"attempts\":\(event.attempts),\"deliveredAt\":\(event.deliveredAt.map(String.init) ?? "null"),"
                + "\"payload\":\(event.body)}"
        }
        let next = events.count == limit ? events.last.map { String($0.seq) } ?? "null" : "null"
        return "{\"events\":[\(items.joined(separator: ","))],\"nextSince\":\(next)}"
    }
}
