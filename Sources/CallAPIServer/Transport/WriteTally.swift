import NIOConcurrencyHelpers

/// Frames the connections' writers have written since the hub last looked, by connection.
///
/// Writers count here under a lock instead of calling into the hub's actor once per frame; the hub drains the
/// tally before each event and feeds it to its state machine, whose outbox counts can only lag behind (and so
/// err on the safe side).
final class WriteTally: Sendable {
    private let counts = NIOLockedValueBox<[SessionID: Int]>([:])

    /// One more frame was written to `id`'s socket.
    func wrote(_ id: SessionID) {
        counts.withLockedValue { $0[id, default: 0] += 1 }
    }

    /// The counts so far, which start again from zero.
    func drain() -> [SessionID: Int] {
        counts.withLockedValue { counts in
            guard !counts.isEmpty else { return [:] }
            defer { counts.removeAll(keepingCapacity: true) }
            return counts
        }
    }
}
