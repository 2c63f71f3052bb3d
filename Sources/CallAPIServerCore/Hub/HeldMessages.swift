import CallAPISignalProtocol
import HeapModule

/// The messages the hub keeps for offline users, and the tombstones of withdrawn pushed calls: a nested value of
/// ``HubState`` with one home for the queues, the counts its limits are checked against (in O(1)), and the
/// deadlines.
///
/// Deadlines are kept in a min-heap, so a tick finds the users with something due without sorting every user
/// that has a held message (it did, on every tick). Entries of messages that left early (delivered, withdrawn,
/// replaced) stay in the heap until their time and are skipped then; the heap is rebuilt when they outnumber
/// the live ones.
package struct HeldMessages: Sendable {
    /// A message kept for an offline user.
    package struct Message: Sendable, Equatable {
        var messageId: String
        var from: String
        var body: MessageBody
        var sentAt: Int64
        var expiresAt: Int64
        /// The call id, when this is a call pushed to the user's devices.
        var pushedCall: String? = nil
    }

    /// When a message of a user is due to expire.
    private struct Deadline: Comparable, Sendable {
        var at: Int64
        var userId: String
        static func < (a: Deadline, b: Deadline) -> Bool { (a.at, a.userId) < (b.at, b.userId) }
    }

    private var byUser: [String: [Message]] = [:]
    /// Withdrawn pushed calls by callee, oldest first, and when each user's oldest one expires.
    private var tombstones: [String: [Tombstone]] = [:]
    private var tombstoneDeadlines = Heap<Deadline>()
    private var bySender: [String: Int] = [:]
    private var deadlines = Heap<Deadline>()
    /// Messages held, and their body bytes (as JSON carries them).
    private(set) var count = 0
    private(set) var bytes = 0

    /// Deadlines in the heap, live or left early (bounded: see ``compactIfSparse()``).
    var scheduledDeadlines: Int { deadlines.count }

    /// The users with messages held, in no particular order.
    var users: Dictionary<String, [Message]>.Keys { byUser.keys }

    /// The messages held for `userId`, oldest first.
    func queue(of userId: String) -> [Message] { byUser[userId] ?? [] }

    /// How many messages `sender` has held for offline users.
    func count(from sender: String) -> Int { bySender[sender] ?? 0 }

    /// Keeps `message` for `userId`, after its other messages.
    mutating func hold(_ message: Message, for userId: String) {
        byUser[userId, default: []].append(message)
        count += 1
        bytes += message.body.escapedCount
        bySender[message.from, default: 0] += 1
        deadlines.insert(Deadline(at: message.expiresAt, userId: userId))
    }

    /// Replaces the body and times of `userId`'s message at `index` (its id, sender and place stay).
    mutating func replace(at index: Int, for userId: String, body: MessageBody, sentAt: Int64, expiresAt: Int64) {
        guard var queue = byUser[userId], queue.indices.contains(index) else { return }
        bytes += body.escapedCount - queue[index].body.escapedCount
        queue[index].body = body
        queue[index].sentAt = sentAt
        queue[index].expiresAt = expiresAt
        byUser[userId] = queue
        deadlines.insert(Deadline(at: expiresAt, userId: userId))
        compactIfSparse()
    }

    /// Removes and returns `userId`'s first message that `matches`.
    mutating func remove(for userId: String, where matches: (Message) -> Bool) -> Message? {
        guard var queue = byUser[userId], let index = queue.firstIndex(where: matches) else { return nil }
        let message = queue.remove(at: index)
        byUser[userId] = queue.isEmpty ? nil : queue
        forget(message)
        compactIfSparse()
        return message
    }

    /// Removes and returns every message held for `userId`, oldest first.
    mutating func takeAll(for userId: String) -> [Message] {
        guard let queue = byUser.removeValue(forKey: userId) else { return [] }
        for message in queue { forget(message) }
        compactIfSparse()
        return queue
    }

    /// Removes the messages whose time has come at `now`: by user in id order, each user's in queue order.
    mutating func takeExpired(now: Int64) -> [(userId: String, messages: [Message])] {
        var due: Set<String> = []
        while let first = deadlines.min, first.at <= now {
            due.insert(deadlines.removeMin().userId)
        }
        var expired: [(userId: String, messages: [Message])] = []
        for userId in due.sorted() {
            guard let queue = byUser[userId] else { continue }
            let gone = queue.filter { $0.expiresAt <= now }
            guard !gone.isEmpty else { continue }
            let kept = queue.filter { $0.expiresAt > now }
            byUser[userId] = kept.isEmpty ? nil : kept
            for message in gone { forget(message) }
            expired.append((userId, gone))
        }
        return expired
    }

    /// The tombstones of `userId` not expired at `now`.
    func liveTombstones(of userId: String, now: Int64) -> [Tombstone] {
        (tombstones[userId] ?? []).filter { $0.expiresAt > now }
    }

    /// Whether `userId` has a tombstone for `callId`.
    func hasTombstone(of userId: String, callId: String) -> Bool {
        tombstones[userId]?.contains { $0.callId == callId } ?? false
    }

    /// Keeps `tombstone` for `userId` (replacing an earlier one of the same call), dropping the oldest past
    /// `maxPerUser`.
    mutating func addTombstone(_ tombstone: Tombstone, for userId: String, maxPerUser: Int, now: Int64) {
        var list = (tombstones[userId] ?? []).filter { $0.callId != tombstone.callId && $0.expiresAt > now }
        list.append(tombstone)
        tombstones[userId] = Array(list.suffix(max(1, maxPerUser)))
        tombstoneDeadlines.insert(Deadline(at: tombstone.expiresAt, userId: userId))
    }

    /// Forgets the tombstones expired at `now`.
    mutating func expireTombstones(now: Int64) {
        while let first = tombstoneDeadlines.min, first.at <= now {
            let userId = tombstoneDeadlines.removeMin().userId
            let live = tombstones[userId]?.filter { $0.expiresAt > now } ?? []
            tombstones[userId] = live.isEmpty ? nil : live
        }
    }

    /// Users with tombstones kept (expired ones leave at the tick after their time).
    var tombstoneUserCount: Int { tombstones.count }

    private mutating func forget(_ message: Message) {
        count -= 1
        bytes -= message.body.escapedCount
        let remaining = (bySender[message.from] ?? 1) - 1
        bySender[message.from] = remaining > 0 ? remaining : nil
    }

    /// Rebuilds the heap from the messages held when most of its entries are of messages that left early.
    private mutating func compactIfSparse() {
        guard deadlines.count > 2 * count + 1024 else { return }
        deadlines = Heap(
            byUser.flatMap { userId, queue in queue.map { Deadline(at: $0.expiresAt, userId: userId) } })
    }
}
