/// The keys of recently handled messages, so a repeat (a retry, a redelivery) is handled once.
/// Bounded: the oldest keys are forgotten first.
struct RecentMessages: Sendable, Equatable {
    struct Key: Hashable, Sendable {
        let sender: UInt
        let callId: String
        let messageId: Int?
        let action: Int?
        /// The caller's settled notice (a cancel naming a device) is not the call's real cancel: a later cancel
        /// of the same call (the caller's ring timeout) must not be taken for a repeat of it.
        let settlesOnDevice: Bool
        /// A digest of the fields above, computed once: each key is hashed up to three times (the check, the
        /// insert, its eviction), and hashing the callId's text each time was most of a received message's
        /// bookkeeping. The set still hashes this digest with its seeded hasher, and compares keys in full.
        private let digest: Int

        init(sender: UInt, callId: String, messageId: Int?, action: Int?, settlesOnDevice: Bool = false) {
            self.sender = sender
            self.callId = callId
            self.messageId = messageId
            self.action = action
            self.settlesOnDevice = settlesOnDevice
            // FNV-1a over the call id's bytes and the other fields.
            var digest: UInt64 = 0xcbf2_9ce4_8422_2325
            func mix(_ byte: UInt64) { digest = (digest ^ byte) &* 0x100_0000_01b3 }
            for byte in callId.utf8 { mix(UInt64(byte)) }
            mix(UInt64(sender))
            mix(messageId.map { UInt64(bitPattern: Int64($0)) &+ 1 } ?? 0)
            mix(action.map { UInt64(bitPattern: Int64($0)) &+ 1 } ?? 0)
            mix(settlesOnDevice ? 1 : 0)
            self.digest = Int(truncatingIfNeeded: digest)
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.digest == rhs.digest && lhs.sender == rhs.sender && lhs.messageId == rhs.messageId
                && lhs.action == rhs.action && lhs.settlesOnDevice == rhs.settlesOnDevice && lhs.callId == rhs.callId
        }

        func hash(into hasher: inout Hasher) { hasher.combine(digest) }
    }

    let capacity: Int
    private var order: [Key] = []
    private var keys: Set<Key> = []
    private var next = 0

    init(capacity: Int = 512) { self.capacity = capacity }

    func contains(_ message: CallMessage, sender: UInt) -> Bool {
        let (byId, byAction) = Self.keys(of: message, sender: sender)
        return byId.map(keys.contains) == true || byAction.map(keys.contains) == true
    }

    mutating func insert(_ message: CallMessage, sender: UInt) {
        let (byId, byAction) = Self.keys(of: message, sender: sender)
        if let byId { insert(byId) }
        if let byAction { insert(byAction) }
    }

    private mutating func insert(_ key: Key) {
        // One lookup for the check and the insert; the evicted key is never this one, which was absent.
        guard keys.insert(key).inserted else { return }
        if order.count < capacity {
            order.append(key)
        } else {
            keys.remove(order[next])
            order[next] = key
            next = (next + 1) % capacity
        }
    }

    // Same sender, call and messageId; or same sender, call and action (a settled notice counting as an action
    // of its own). The callId is part of the first key
    // because existing clients restart their messageId counter when the app restarts. A message without a
    // messageId (the Web client sends none) has only the second key.
    // Two optionals rather than an array: no allocation for a check made on every message.
    private static func keys(of message: CallMessage, sender: UInt) -> (byId: Key?, byAction: Key?) {
        let byAction = Key(
            sender: sender, callId: message.callId, messageId: nil, action: message.action.rawValue,
            settlesOnDevice: message.answeredByDevice != nil || message.rejectedByDevice != nil)
        guard let messageId = message.messageId else { return (nil, byAction) }
        let byId = Key(sender: sender, callId: message.callId, messageId: messageId, action: nil)
        return (byId, message.action.isCallFlow ? byAction : nil)
    }
}
