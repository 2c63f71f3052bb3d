import DequeModule

/// The ids of calls the ledger ended lately, so that a later message with one of them is not taken for a new call:
/// a call that ended stays ended (its record and its webhooks never change). A pure value, part of
/// ``CallLedgerMachine``; bounded in time and in count, oldest forgotten first. Past those bounds the database
/// still keeps the first record and refuses a second event under the same key (``LedgerStore``).
package struct EndedCalls: Sendable {
    private var ids: Set<String> = []
    /// The same ids with when each ended, oldest first.
    private var order: Deque<(callId: String, endedAt: Int64)> = []
    let keepMillis: Int64
    let maxCount: Int

    init(keepMillis: Int64, maxCount: Int) {
        self.keepMillis = keepMillis
        self.maxCount = max(1, maxCount)
    }

    var count: Int { ids.count }

    func contains(_ callId: String) -> Bool { ids.contains(callId) }

    /// Remembers that `callId` ended at `now`.
    mutating func add(_ callId: String, now: Int64) {
        guard ids.insert(callId).inserted else { return }
        order.append((callId, now))
        while order.count > maxCount, let oldest = order.popFirst() { ids.remove(oldest.callId) }
    }

    /// Forgets the calls that ended more than ``keepMillis`` before `now`.
    mutating func expire(now: Int64) {
        while let oldest = order.first, now - oldest.endedAt >= keepMillis {
            order.removeFirst()
            ids.remove(oldest.callId)
        }
    }
}
