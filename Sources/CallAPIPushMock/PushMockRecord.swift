/// A push the mock accepted or refused, as it arrived.
public struct RecordedPush: Sendable, Equatable {
    /// Which provider's endpoint the push was sent to.
    public enum Provider: String, Sendable, Equatable {
        case apns
        case fcm
    }
    public var provider: Provider
    /// The request path (`/3/device/<token>`, `/v1/projects/<id>/messages:send`).
    public var path: String
    /// Request headers, names lower-cased.
    public var headers: [String: String]
    /// The request body.
    public var body: String
    /// The device token the push was for.
    public var deviceToken: String
    /// The HTTP status the mock answered.
    public var status: Int
    /// The APNs `reason` or FCM error code of a refusal; empty when accepted.
    public var reason: String
    /// When it arrived, milliseconds since 1970 on the mock's clock.
    public var receivedAt: Int64
    /// The HTTP version it arrived over (APNs and FCM are reached over HTTP/2).
    public var httpMajorVersion: Int
}

/// A scripted answer for one device token.
public enum MockAnswer: Sendable, Equatable {
    /// APNs 410 `Unregistered` / FCM 404 `UNREGISTERED`.
    case unregistered
    /// APNs 400 `BadDeviceToken`.
    case badDeviceToken
    /// 429 (APNs `TooManyRequests`, FCM `QUOTA_EXCEEDED`).
    case tooManyRequests
    /// 503 (APNs `ServiceUnavailable`, FCM `UNAVAILABLE`).
    case unavailable
    /// 500 `InternalServerError`.
    case internalError
    /// APNs 403 `ExpiredProviderToken` / FCM 401 `UNAUTHENTICATED`: the server's credential refused.
    case expiredProviderToken
}
