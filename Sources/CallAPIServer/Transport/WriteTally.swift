import NIOConcurrencyHelpers

/// Frames written to the connections' sockets since the hub last looked, by connection.
///
/// The connections count here under a lock when a write completes, instead of taking the hub's lock once per
/// write; the hub drains the tally before each event and feeds it to its state machine, whose outbox counts can
/// only lag behind (and so err on the safe side).
final class WriteTally: Sendable {
    private let counts = NIOLockedValueBox<[SessionID: Int]>([:])

    /// `frames` more frames were written to `id`'s socket.
    func wrote(_ id: SessionID, frames: Int = 1) {
        counts.withLockedValue { $0[id, default: 0] += frames }
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
