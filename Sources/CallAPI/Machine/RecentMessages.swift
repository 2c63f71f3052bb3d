/// The keys of recently handled messages, so a repeat (a retry, a redelivery) is handled once.
/// Bounded: the oldest keys are forgotten first.
struct RecentMessages: Sendable, Equatable {
    struct Key: Hashable, Sendable {
        var sender: UInt
        var callId: String
        var messageId: Int?
        var action: Int?
        /// The caller's settled notice (a cancel naming a device) is not the call's real cancel: a later cancel
        /// of the same call (the caller's ring timeout) must not be taken for a repeat of it.
        var settlesOnDevice = false
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
