import HeapModule

/// When each session next needs its hub's once-a-second tick (a login or join timeout, its token's notice or
/// expiry, the idle timeout), earliest first: the tick visits only the sessions with something due, not every
/// session. Both endpoints' machines keep one (``HubState``, ``ChannelState``).
///
/// A session has one live entry at a time. Its deadline may move later without a new one: a frame pushes the
/// idle timeout back on every read, and the tick, finding nothing due when the entry comes, schedules the session
/// again. When a deadline moves earlier (a login, a renewal), ``schedule(_:at:)`` adds an earlier entry and the
/// older one goes stale; stale entries, and those of sessions that have gone, are skipped when they come due, and
/// the heap is rebuilt from the live entries when stale ones outnumber them, so it stays proportional to the
/// sessions however a client drives its deadlines.
package struct SessionDeadlines: Sendable {
    private struct Entry: Comparable, Sendable {
        var at: Int64
        var id: SessionID

        static func < (lhs: Entry, rhs: Entry) -> Bool { (lhs.at, lhs.id) < (rhs.at, rhs.id) }
    }

    private var heap = Heap<Entry>()
    /// Each session's live entry.
    private var live: [SessionID: Int64] = [:]

    /// Entries in the heap, stale ones included (for tests).
    var entryCount: Int { heap.count }

    /// Makes `id` due at `at`, unless it is due at that time or earlier already.
    mutating func schedule(_ id: SessionID, at: Int64) {
        if let current = live[id], current <= at { return }
        live[id] = at
        heap.insert(Entry(at: at, id: id))
        if heap.count > 2 * live.count + Self.slack {
            heap = Heap(live.map { Entry(at: $0.value, id: $0.key) })
        }
    }

    /// Forgets `id` (the session has gone); its entry goes stale.
    mutating func remove(_ id: SessionID) {
        live[id] = nil
    }

    /// The sessions due at `now`, in ascending order of id (the order the tick acts in), with their entries
    /// removed: each is scheduled again once the tick has seen to it.
    mutating func takeDue(now: Int64) -> [SessionID] {
        var due: [SessionID] = []
        while let first = heap.min, first.at <= now {
            let entry = heap.removeMin()
            guard live[entry.id] == entry.at else { continue }  // stale
            live[entry.id] = nil
            due.append(entry.id)
        }
        due.sort()
        return due
    }

    /// `millis` after `start`, at most `Int64.max` (a timeout configured as "never").
    static func time(_ millis: Int64, after start: Int64) -> Int64 {
        let (sum, overflow) = start.addingReportingOverflow(millis)
        return overflow ? .max : sum
    }

    /// Stale entries tolerated beyond the live ones before a rebuild.
    private static let slack = 1024
}
