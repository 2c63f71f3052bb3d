import DequeModule

/// Which mailbox rows a node delivers straight from their notification and which it waits to read (docs/scale-out.md,
/// "Latency"): a pure value the cluster link runs for its listener and its reader.
///
/// A forward's notification carries its rows when they fit in one (a NOTIFY payload is under 8,000 bytes). Delivering
/// them from it saves the read's round trip; the rows stay the truth: the next read deletes them (and skips them), and
/// a node that dies first leaves them for the node the receiver reconnects to, which may deliver a message twice, as
/// after any node's death. Order between two users is kept: after a notification without its rows (too large), or
/// a listener that (re)connected and may have missed some, rows wait for a read that began after it, so a later
/// message is never delivered before an earlier one still in the mailbox.
package struct MailboxDeliveries: Sendable {
    /// Whether notified rows may be delivered at once.
    enum Phase: Sendable, Equatable {
        /// Every row notified so far was delivered or read: the next ones may go at once.
        case direct
        /// Rows may be in the mailbox that no notification carried: notified rows wait for the read numbered
        /// `after` + 1 or later to finish.
        case awaitingRead(after: Int)
    }

    /// What to do with a notification.
    package enum Notified: Sendable, Equatable {
        /// Deliver these (rows already read are left out), in order.
        case deliver([ClusterEnvelope])
        /// Wake the reader: the rows come with its read.
        case read
    }

    private var phase: Phase
    /// Reads started so far (the reader numbers each read).
    private var reads = 0
    /// Rows delivered from their notification and not yet read (the read deletes them without delivering them).
    private var delivered: Set<Int64> = []
    /// Rows a read delivered lately, oldest first: their notification, if it comes after, delivers nothing.
    private var recentlyRead = Deque<Int64>()
    private var recentlyReadSet: Set<Int64> = []
    /// At most this many rows delivered ahead of their read, and remembered as read: past it, rows wait for a read.
    package let limit: Int

    package init(limit: Int = 20_000) {
        self.limit = max(1, limit)
        // Until the first read, rows may wait that no notification here carried.
        phase = .awaitingRead(after: 0)
    }

    /// The listener (re)connected: notifications sent while it was away are lost, so rows wait for a read again.
    package mutating func listening() {
        phase = .awaitingRead(after: reads)
    }

    /// A notification for this node's mailbox: its rows with their ids, or `nil` when it carried none.
    package mutating func notified(_ rows: [(id: Int64, envelope: ClusterEnvelope)]?) -> Notified {
        guard let rows, case .direct = phase, delivered.count + rows.count <= limit else {
            phase = .awaitingRead(after: reads)
            return .read
        }
        var envelopes: [ClusterEnvelope] = []
        for (id, envelope) in rows where !recentlyReadSet.contains(id) && delivered.insert(id).inserted {
            envelopes.append(envelope)
        }
        return .deliver(envelopes)
    }

    /// A read begins; returns its number, for ``read(_:rows:drained:)``.
    package mutating func readStarts() -> Int {
        reads += 1
        return reads
    }

    /// Read number `number` took `rows`, and all there were when `drained` (it took fewer than it may): returns those
    /// to deliver (the ones no notification delivered), in order. A failed read changes nothing: its rows are still
    /// in the mailbox, for the next.
    package mutating func read(
        _ number: Int, rows: [(id: Int64, envelope: ClusterEnvelope)], drained: Bool
    ) -> [ClusterEnvelope] {
        var envelopes: [ClusterEnvelope] = []
        for (id, envelope) in rows {
            if delivered.remove(id) != nil { continue }
            envelopes.append(envelope)
            remember(id)
        }
        if drained, case .awaitingRead(let after) = phase, number > after { phase = .direct }
        return envelopes
    }

    /// Remembers that a read delivered row `id`, forgetting the oldest past ``limit``.
    private mutating func remember(_ id: Int64) {
        guard recentlyReadSet.insert(id).inserted else { return }
        recentlyRead.append(id)
        while recentlyRead.count > limit, let oldest = recentlyRead.popFirst() { recentlyReadSet.remove(oldest) }
    }

    /// Rows delivered from their notification and not read yet.
    package var deliveredAhead: Int { delivered.count }
}
