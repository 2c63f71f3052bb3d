/// The bridge's time bounds.
public struct SystemCallBridgeConfiguration: Sendable, Equatable {
    /// How long after the system's answer the call may take to reach `connecting` (for a pushed call, this
    /// includes the signaling connection coming back); then the answer fails and the call ends as failed.
    public var answerTimeoutMillis: Int64
    /// How long past the push's ring deadline its call may still arrive over signaling (clocks differ).
    public var arrivalGraceMillis: Int64
    /// The longest wait for a pushed call to arrive over signaling, whatever its deadline says.
    public var maxArrivalWaitMillis: Int64

    public init(
        answerTimeoutMillis: Int64 = 10_000, arrivalGraceMillis: Int64 = 2_000, maxArrivalWaitMillis: Int64 = 30_000
    ) {
        self.answerTimeoutMillis = answerTimeoutMillis
        self.arrivalGraceMillis = arrivalGraceMillis
        self.maxArrivalWaitMillis = maxArrivalWaitMillis
    }
}
