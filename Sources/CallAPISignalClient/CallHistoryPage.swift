import CallAPISignalProtocol

/// A page of the user's calls from the server's call ledger (``SignalClient/callHistory(missedOnly:since:limit:cursor:)``).
public struct CallHistoryPage: Sendable, Equatable {
    /// Newest first.
    public var calls: [CallRecord]
    /// Pass it back for the next page; `nil` on the last one.
    public var nextCursor: String?

    public init(calls: [CallRecord], nextCursor: String?) {
        self.calls = calls
        self.nextCursor = nextCursor
    }
}
