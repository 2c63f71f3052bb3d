/// The keys of recently handled messages, so a repeat (a retry, a redelivery) is handled once.
/// Bounded: the oldest keys are forgotten first.
///
/// The keys sit in a ring, oldest first once it is full, with an index beside it: an open-addressing table of
/// positions in the ring, probed from each key's digest. A `Set<Key>` did the same with the standard hasher run
/// over the digest on every check, insert and eviction, which was most of a received message's bookkeeping.
struct RecentMessages: Sendable, Equatable {
    struct Key: Equatable, Sendable {
        let sender: UInt
        let callId: String
        let messageId: Int?
        let action: Int?
        /// The caller's settled notice (a cancel naming a device) is not the call's real cancel: a later cancel
        /// of the same call (the caller's ring timeout) must not be taken for a repeat of it.
        let settlesOnDevice: Bool
        /// A digest of the fields above, computed once: it places the key in the index, and keys with different
        /// digests are different without comparing their call ids.
        let digest: UInt64

        init(sender: UInt, callId: String, messageId: Int?, action: Int?, settlesOnDevice: Bool = false) {
            self.init(
                sender: sender, callId: callId, callIdDigest: Self.digest(of: callId), messageId: messageId,
                action: action, settlesOnDevice: settlesOnDevice)
        }

        /// A key whose call id's digest (``digest(of:)``) is known: a message's two keys share it.
        init(
            sender: UInt, callId: String, callIdDigest: UInt64, messageId: Int?, action: Int?,
            settlesOnDevice: Bool = false
        ) {
            self.sender = sender
            self.callId = callId
            self.messageId = messageId
            self.action = action
            self.settlesOnDevice = settlesOnDevice
            // FNV-1a, continued from the call id's, over the other fields.
            var digest = callIdDigest
            func mix(_ value: UInt64) { digest = (digest ^ value) &* 0x100_0000_01b3 }
            mix(UInt64(sender))
            mix(messageId.map { UInt64(bitPattern: Int64($0)) &+ 1 } ?? 0)
            mix(action.map { UInt64(bitPattern: Int64($0)) &+ 1 } ?? 0)
            mix(settlesOnDevice ? 1 : 0)
            self.digest = digest
        }

        /// FNV-1a over the call id's UTF-8 bytes, read in place where the string allows.
        static func digest(of callId: String) -> UInt64 {
            var digest: UInt64 = 0xcbf2_9ce4_8422_2325
            let read: ()? = callId.utf8.withContiguousStorageIfAvailable { bytes in
                for byte in bytes { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01b3 }
            }
            if read == nil {
                for byte in callId.utf8 { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01b3 }
            }
            return digest
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.digest == rhs.digest && lhs.sender == rhs.sender && lhs.messageId == rhs.messageId
                && lhs.action == rhs.action && lhs.settlesOnDevice == rhs.settlesOnDevice && lhs.callId == rhs.callId
        }
    }

    let capacity: Int
    /// The keys remembered, in the order they came; once full, `next` is the oldest, replaced by the next key.
    private var ring: [Key] = []
    private var next = 0
    /// The index: per slot, the key's position in `ring` plus one, or 0 for an empty slot. At least twice as many
    /// slots as keys, a power of two; a key's probe starts at the slot its mixed digest names and goes up.
    private var slots: [Int32]
    /// Mixed into each digest before it picks a slot, chosen per instance: where a key lands cannot be planned
    /// by a peer choosing its call ids to crowd one run of slots.
    private let seed: UInt64

    init(capacity: Int = 512) {
        self.capacity = max(1, capacity)
        var size = 8
        while size < 2 * self.capacity { size *= 2 }
        slots = Array(repeating: 0, count: size)
        seed = UInt64.random(in: 0...UInt64.max) | 1
    }

    /// Equal when the same keys are remembered in the same order (the index and seed aside).
    static func == (lhs: RecentMessages, rhs: RecentMessages) -> Bool {
        lhs.capacity == rhs.capacity && lhs.oldestFirst.elementsEqual(rhs.oldestFirst)
    }

    /// The keys remembered, oldest first.
    var oldestFirst: [Key] { Array(ring[next...] + ring[..<next]) }

    /// Whether `message` from `sender` repeats one remembered; one that does not is remembered from now on.
    mutating func isRepeat(_ message: CallMessage, sender: UInt) -> Bool {
        let (byId, byAction) = Self.keys(of: message, sender: sender)
        if byId.map(contains) == true || byAction.map(contains) == true { return true }
        if let byId { insert(byId) }
        if let byAction { insert(byAction) }
        return false
    }

    func contains(_ key: Key) -> Bool {
        if case .found = find(key) { true } else { false }
    }

    mutating func insert(_ key: Key) {
        guard case .empty(let slot) = find(key) else { return }
        if ring.count < capacity {
            ring.append(key)
            slots[slot] = Int32(ring.count)
        } else {
            // The oldest key leaves the index before the new one takes its place in the ring; removing it may
            // move other keys' slots, so the new key's slot is looked up again.
            remove(at: next)
            ring[next] = key
            guard case .empty(let free) = find(key) else { return }
            slots[free] = Int32(next + 1)
            next = (next + 1) % capacity
        }
    }

    private enum Probe {
        case found(slot: Int)
        case empty(slot: Int)
    }

    private var mask: Int { slots.count - 1 }

    private func home(of digest: UInt64) -> Int {
        let mixed = (digest ^ seed) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> 32) & mask
    }

    /// The slot holding `key`, or the empty slot where its probe ends.
    private func find(_ key: Key) -> Probe {
        var slot = home(of: key.digest)
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { return .empty(slot: slot) }
            if ring[entry - 1] == key { return .found(slot: slot) }
            slot = (slot + 1) & mask
        }
    }

    /// Takes the key at ring position `position` out of the index, shifting back the keys probed past its slot
    /// so that every probe still reaches its key before an empty slot.
    private mutating func remove(at position: Int) {
        var slot = home(of: ring[position].digest)
        while Int(slots[slot]) != position + 1 { slot = (slot + 1) & mask }
        var hole = slot
        var probe = (slot + 1) & mask
        while slots[probe] != 0 {
            let wanted = home(of: ring[Int(slots[probe]) - 1].digest)
            // The key at `probe` may fill the hole when its home is not cyclically within (hole, probe].
            if (probe - wanted) & mask >= (probe - hole) & mask {
                slots[hole] = slots[probe]
                hole = probe
            }
            probe = (probe + 1) & mask
        }
        slots[hole] = 0
    }

    // Same sender, call and messageId; or same sender, call and action (a settled notice counting as an action
    // of its own). The callId is part of the first key
    // because existing clients restart their messageId counter when the app restarts. A message without a
    // messageId (the Web client sends none) has only the second key.
    // Two optionals rather than an array: no allocation for a check made on every message.
    private static func keys(of message: CallMessage, sender: UInt) -> (byId: Key?, byAction: Key?) {
        let callIdDigest = Key.digest(of: message.callId)
        let byAction = Key(
            sender: sender, callId: message.callId, callIdDigest: callIdDigest, messageId: nil,
            action: message.action.rawValue,
            settlesOnDevice: message.answeredByDevice != nil || message.rejectedByDevice != nil)
        guard let messageId = message.messageId else { return (nil, byAction) }
        let byId = Key(
            sender: sender, callId: message.callId, callIdDigest: callIdDigest, messageId: messageId, action: nil)
        return (byId, message.action.isCallFlow ? byAction : nil)
    }
}
