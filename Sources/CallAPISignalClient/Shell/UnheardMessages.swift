import CallAPISignalProtocol

/// Messages that arrived while the client had no message listener, kept for the first listener added.
///
/// An app logs in and then initializes CallAPI, which adds its listener: a call that arrives in between must ring,
/// not vanish. And ``SignalClient/addListener(listener:)`` reaches the client's event loop as a task, which the loop
/// may run only after a read that was already waiting (NIO handles I/O before tasks); without this, the first
/// message after CallAPI prepared could reach no one.
///
/// Bounded by count and bytes: when a message would exceed either, the oldest kept ones make room and are returned
/// so that the client can say so.
struct UnheardMessages {
    /// At most this many messages are kept.
    static let maxCount = 64
    /// At most this many body bytes are kept.
    static let maxBytes = 1 << 20

    private var kept: [ServerFrame.Message] = []
    private var bytes = 0

    var isEmpty: Bool { kept.isEmpty }
    var count: Int { kept.count }

    /// Keeps `message`; returns the oldest messages let go to make room for it (usually none).
    mutating func keep(_ message: ServerFrame.Message) -> [ServerFrame.Message] {
        let size = message.body.utf8.count
        // Larger than all that is kept: it alone is let go, not the others for it.
        guard size <= Self.maxBytes else { return [message] }
        var dropped: [ServerFrame.Message] = []
        while !kept.isEmpty, kept.count >= Self.maxCount || bytes + size > Self.maxBytes {
            let oldest = kept.removeFirst()
            bytes -= oldest.body.utf8.count
            dropped.append(oldest)
        }
        kept.append(message)
        bytes += size
        return dropped
    }

    /// Every kept message, oldest first; none are kept afterwards.
    mutating func takeAll() -> [ServerFrame.Message] {
        defer {
            kept = []
            bytes = 0
        }
        return kept
    }
}
