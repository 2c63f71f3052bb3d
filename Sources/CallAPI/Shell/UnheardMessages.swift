/// Messages that arrived while a signaling client had no message listener, kept for the first listener added
/// (``SignalMessageListeners``).
///
/// Bounded by count and bytes: when a message would exceed either, the oldest kept ones make room.
struct UnheardMessages: Sendable {
    /// A received message and who the channel says sent it.
    struct Message: Sendable, Equatable {
        var text: String
        var sender: SignalSender?
    }

    /// At most this many messages are kept.
    static let maxCount = 64
    /// At most this many bytes of text are kept.
    static let maxBytes = 1 << 20

    private var kept: [Message] = []
    private var bytes = 0

    var isEmpty: Bool { kept.isEmpty }

    /// Keeps `message`; returns how many messages were let go for it: the oldest kept ones that made room, or
    /// the message itself if it alone is larger than what is kept.
    mutating func keep(_ message: Message) -> Int {
        let size = message.text.utf8.count
        guard size <= Self.maxBytes else { return 1 }
        var dropped = 0
        while !kept.isEmpty, kept.count >= Self.maxCount || bytes + size > Self.maxBytes {
            bytes -= kept.removeFirst().text.utf8.count
            dropped += 1
        }
        kept.append(message)
        bytes += size
        return dropped
    }

    /// Every kept message, oldest first; none are kept afterwards.
    mutating func takeAll() -> [Message] {
        defer {
            kept = []
            bytes = 0
        }
        return kept
    }
}
