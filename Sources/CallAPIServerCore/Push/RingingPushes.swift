import CallAPISignalProtocol
import HeapModule

/// Calls that ring a user's online sessions and were also pushed to that user's registered devices with no session
/// (docs/push.md, "A user online on another device"): kept until the ring time runs out, so that a pushed device
/// that logs in gets the call, a repeat of the call is not pushed again, and an answer, a decline or a cancel
/// withdraws the pushes with a tombstone saying why.
package struct RingingPushes: Sendable {
    /// One call pushed to some of its callee's devices.
    package struct Ring: Sendable, Equatable {
        var callId: String
        /// The caller.
        var from: String
        /// The devices pushed, by id.
        var devices: [String]
        /// The call message as relayed, for a pushed device that logs in.
        var body: MessageBody
        var messageId: String
        var sentAt: Int64
        var expiresAt: Int64
        /// The sessions on other nodes of a cluster, each naming a pushed device, this call was handed to.
        var handedTo: Set<RemoteSession> = []
    }

    /// A session on another node of a cluster, as that node numbers it.
    package struct RemoteSession: Sendable, Hashable {
        var node: String
        var id: SessionID
    }

    private struct Deadline: Comparable, Sendable {
        var at: Int64
        var userId: String
        static func < (a: Deadline, b: Deadline) -> Bool { (a.at, a.userId) < (b.at, b.userId) }
    }

    private var byUser: [String: [Ring]] = [:]
    private var deadlines = Heap<Deadline>()
    /// The escaped bytes of the bodies kept (they share the held messages' budget).
    private(set) var bytes = 0
    /// Rings kept.
    private(set) var count = 0

    /// The ring of `callId` for `userId`, if it is kept.
    func ring(of userId: String, callId: String) -> Ring? {
        byUser[userId]?.first { $0.callId == callId }
    }

    /// The rings of `userId` that pushed `device`.
    func rings(of userId: String, pushing device: String) -> [Ring] {
        (byUser[userId] ?? []).filter { $0.devices.contains(device) }
    }

    /// The users with kept rings, in id order.
    var users: [String] { byUser.keys.sorted() }

    /// Notes that the ring of `callId` for `userId` was handed to `session`; returns whether it was not already.
    mutating func handOver(_ callId: String, of userId: String, to session: RemoteSession) -> Bool {
        guard var rings = byUser[userId], let index = rings.firstIndex(where: { $0.callId == callId }) else {
            return false
        }
        guard rings[index].handedTo.insert(session).inserted else { return false }
        byUser[userId] = rings
        return true
    }

    /// Keeps `ring` for `userId`; past `maxPerUser` the user's oldest ring is let go (its pushes were sent; its
    /// tombstone would only say it expired).
    mutating func add(_ ring: Ring, for userId: String, maxPerUser: Int) {
        var rings = byUser[userId] ?? []
        while rings.count >= max(1, maxPerUser) { forget(rings.removeFirst()) }
        rings.append(ring)
        byUser[userId] = rings
        bytes += ring.body.escapedCount
        count += 1
        deadlines.insert(Deadline(at: ring.expiresAt, userId: userId))
    }

    /// A repeat of the call (same caller, same id): its body replaces the kept one.
    mutating func replaceBody(of callId: String, for userId: String, with body: MessageBody, sentAt: Int64) {
        guard var rings = byUser[userId], let index = rings.firstIndex(where: { $0.callId == callId }) else { return }
        bytes += body.escapedCount - rings[index].body.escapedCount
        rings[index].body = body
        rings[index].sentAt = sentAt
        byUser[userId] = rings
    }

    /// Removes and returns the ring of `callId` for `userId`.
    mutating func remove(_ callId: String, of userId: String) -> Ring? {
        guard var rings = byUser[userId], let index = rings.firstIndex(where: { $0.callId == callId }) else {
            return nil
        }
        let ring = rings.remove(at: index)
        byUser[userId] = rings.isEmpty ? nil : rings
        forget(ring)
        return ring
    }

    /// Removes the rings whose ring time is over at `now`, by user in id order.
    mutating func takeExpired(now: Int64) -> [(userId: String, ring: Ring)] {
        var due: Set<String> = []
        while let first = deadlines.min, first.at <= now { due.insert(deadlines.removeMin().userId) }
        var expired: [(userId: String, ring: Ring)] = []
        for userId in due.sorted() {
            guard let rings = byUser[userId] else { continue }
            let kept = rings.filter { $0.expiresAt > now }
            byUser[userId] = kept.isEmpty ? nil : kept
            for ring in rings where ring.expiresAt <= now {
                forget(ring)
                expired.append((userId, ring))
            }
        }
        return expired
    }

    private mutating func forget(_ ring: Ring) {
        bytes -= ring.body.escapedCount
        count -= 1
    }
}
