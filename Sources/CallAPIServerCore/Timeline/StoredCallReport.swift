import CallAPISignalProtocol

/// A device's report of a call as the server keeps it: stamped with the user whose session sent it and when it
/// arrived (server clock).
public struct StoredCallReport: Sendable, Equatable, Codable {
    /// The user whose session sent it (authenticated; the report cannot name another).
    public var userId: String
    public var receivedAt: Int64
    public var report: CallReport

    public init(userId: String, receivedAt: Int64, report: CallReport) {
        self.userId = userId
        self.receivedAt = receivedAt
        self.report = report
    }

    /// The most reports kept for one call (a user on a few devices, and the other side): more are refused.
    public static let maxPerCall = 8
}
