/// Messages that arrived while a signaling client had no message listener, kept for the first listener added
/// (``SignalMessageListeners``).
///
/// Bounded by count and bytes: when a message would exceed either, the oldest kept ones make room, and how many
/// were let go is counted.
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
    /// Messages let go since the last ``takeAll()``: the oldest that made room, or one larger than all that is kept.
    private(set) var dropped = 0

    /// Whether there is nothing to hand over: no message kept and none let go.
    var isEmpty: Bool { kept.isEmpty && dropped == 0 }

    mutating func keep(_ message: Message) {
        let size = message.text.utf8.count
        guard size <= Self.maxBytes else {
            dropped += 1
            return
        }
        while !kept.isEmpty, kept.count >= Self.maxCount || bytes + size > Self.maxBytes {
            bytes -= kept.removeFirst().text.utf8.count
            dropped += 1
        }
        kept.append(message)
        bytes += size
    }

    /// Every kept message, oldest first, and how many were let go; nothing is kept or counted afterwards.
    mutating func takeAll() -> (messages: [Message], dropped: Int) {
        defer { self = UnheardMessages() }
        return (kept, dropped)
    }
}
