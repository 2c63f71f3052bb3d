/// The keys of recently handled messages, so a repeat (a retry, a redelivery) is handled once.
/// Bounded: the oldest keys are forgotten first.
struct RecentMessages: Sendable, Equatable {
    struct Key: Hashable, Sendable {
        var sender: UInt
        var callId: String
        var messageId: Int?
        var action: Int?
    }

    let capacity: Int
    private var order: [Key] = []
    private var keys: Set<Key> = []
    private var next = 0

    init(capacity: Int = 512) { self.capacity = capacity }

    func contains(_ message: CallMessage, sender: UInt) -> Bool {
        Self.keys(of: message, sender: sender).contains { keys.contains($0) }
    }

    mutating func insert(_ message: CallMessage, sender: UInt) {
        for key in Self.keys(of: message, sender: sender) where !keys.contains(key) {
            if order.count < capacity {
                order.append(key)
            } else {
                keys.remove(order[next])
                order[next] = key
                next = (next + 1) % capacity
            }
            keys.insert(key)
        }
    }

    // Same sender, call and messageId; or same call and action. The callId is part of the first key because
    // existing clients restart their messageId counter when the app restarts.
    private static func keys(of message: CallMessage, sender: UInt) -> [Key] {
        guard message.action.isCallFlow else {
            return [Key(sender: sender, callId: message.callId, messageId: message.messageId, action: nil)]
        }
        return [
            Key(sender: sender, callId: message.callId, messageId: message.messageId, action: nil),
            Key(sender: sender, callId: message.callId, messageId: nil, action: message.action.rawValue),
        ]
    }
}
