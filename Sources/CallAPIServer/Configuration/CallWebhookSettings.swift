import CallAPIServerCore
/// Durable call webhooks (docs/webhooks.md): where the ledger's call events are posted, and how hard the server
/// tries.
public struct CallWebhookSettings: Sendable, Equatable {
    /// The URL each event is POSTed to.
    public var url: String
    /// The HMAC-SHA256 key of the `X-CallAPI-Signature` header; no header without one.
    public var secret: String?
    /// Undelivered events the queue holds at most; an event over it is refused: logged with its key and counted
    /// (`callapi_call_webhook_events_refused_total`).
    public var maxPendingEvents = 10_000
    /// Posts in flight at once (one per call at most: a call's events go in order).
    public var maxConcurrentDeliveries = 8
    /// The delay before the first retry; it doubles each attempt up to ``retryCapMillis``.
    public var retryBaseMillis: Int64 = 1000
    /// The longest delay between two attempts.
    public var retryCapMillis: Int64 = 60_000
    /// How long one attempt may take.
    public var timeoutMillis: Int64 = 10_000
    /// Delivered events are kept this many days for replay (`GET /v1/webhooks/events`).
    public var retentionDays = 7

    public init(url: String, secret: String? = nil) {
        self.url = url
        self.secret = secret
    }

    var limits: CallWebhookLimits {
        CallWebhookLimits(
            maxPendingEvents: maxPendingEvents, maxConcurrentDeliveries: maxConcurrentDeliveries,
            retryBaseMillis: retryBaseMillis, retryCapMillis: retryCapMillis)
    }
}
