/// The last calls the system screen was done with (ended, declined, or withdrawn by the server before their
/// push came), so that a late push is reported and ended at once, and a late ring over signaling is rejected
/// instead of ringing a call the user already saw end. Bounded: the oldest are forgotten.
struct EndedCalls: Sendable, Equatable {
    static let capacity = 64

    /// In order of ending; the reason a late push is shown with.
    private var entries: [(callId: String, reason: SystemCallEndReason)] = []

    func reason(of callId: String) -> SystemCallEndReason? {
        entries.last { $0.callId == callId }?.reason
    }

    mutating func insert(_ callId: String, reason: SystemCallEndReason) {
        entries.removeAll { $0.callId == callId }
        entries.append((callId, reason))
        if entries.count > Self.capacity { entries.removeFirst(entries.count - Self.capacity) }
    }

    static func == (lhs: EndedCalls, rhs: EndedCalls) -> Bool {
        lhs.entries.elementsEqual(rhs.entries) { $0.callId == $1.callId && $0.reason == $1.reason }
    }
}
