/// Bounds and retry schedule of ``CallWebhookMachine``.
package struct CallWebhookLimits: Sendable, Equatable {
    package var maxPendingEvents: Int
    package var maxConcurrentDeliveries: Int
    package var retryBaseMillis: Int64
    package var retryCapMillis: Int64

    package init(
        maxPendingEvents: Int = 10_000, maxConcurrentDeliveries: Int = 8, retryBaseMillis: Int64 = 1000,
        retryCapMillis: Int64 = 60_000
    ) {
        self.maxPendingEvents = max(1, maxPendingEvents)
        self.maxConcurrentDeliveries = max(1, maxConcurrentDeliveries)
        self.retryBaseMillis = max(1, retryBaseMillis)
        self.retryCapMillis = max(self.retryBaseMillis, retryCapMillis)
    }

    /// The wait after the `attempts`th failed attempt: the base doubled per earlier failure, capped, then scaled by
    /// a factor between 0.5 (`jitter` 0) and 1 (`jitter` 1) so that receivers coming back are not hit in lockstep.
    package func retryDelay(afterAttempts attempts: Int, jitter: Double) -> Int64 {
        let doublings = min(max(0, attempts - 1), 40)
        let nominal = min(retryCapMillis, retryBaseMillis.multipliedReportingOverflow(by: 1 << doublings).partialValue)
        let capped = nominal <= 0 ? retryCapMillis : nominal
        let factor = 0.5 + 0.5 * min(1, max(0, jitter.isFinite ? jitter : 1))
        return Int64((Double(capped) * factor).rounded())
    }
}
