import CallAPIServerCore
/// What a provider answered to one push.
public enum PushOutcome: Sendable, Equatable {
    /// Accepted for delivery.
    case delivered
    /// The token is no longer valid (APNs `BadDeviceToken`, 410 `Unregistered`; FCM `UNREGISTERED`): the device
    /// is removed.
    case unregistered(String)
    /// A passing failure (429, 5xx, timeout, connection): try again after a backoff, or after `afterMillis` when
    /// the provider said.
    case retry(String, afterMillis: Int64?)
    /// A failure that another attempt would not fix (a bad request, a bad key).
    case failed(String)
    /// The provider refused the server's own credential (the APNs provider token) and it may not be replaced
    /// yet (Apple allows one new token per 20 minutes): not retried.
    case credentialRefused(String)
}

/// How a push ended, counted per provider in `callapi_pushes_total{provider,outcome}`.
public enum PushMetricOutcome: String, Sendable, Equatable, CaseIterable {
    case delivered
    /// The provider rejected the token; the device was removed.
    case unregistered
    /// Failed for good, or retries ran out.
    case failed
    /// A passing failure that will be tried again.
    case retried
    /// The call was withdrawn or taken before the push was sent.
    case withdrawn
    /// The ring deadline passed before it could be sent.
    case expired
    /// Too many pushes waiting; dropped.
    case overflow
    /// No provider is configured for the device's platform.
    case unconfigured
    /// The provider refused the server's credential, which may not be replaced yet (APNs's 20-minute rule).
    case credentialRefused
}
