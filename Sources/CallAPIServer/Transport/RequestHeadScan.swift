/// Watches the first bytes of a connection for the end of its HTTP request head, and whether the request asks
/// for a WebSocket. A pure byte scanner: the connection guard decides what to do with its answers.
struct RequestHeadScan: Sendable {
    /// The longest head accepted (the HTTP decoder's own limits are of the same order).
    static let maxHeadBytes = 16 * 1024

    enum Outcome: Sendable, Equatable {
        /// The head is not complete yet.
        case incomplete
        /// The head ended; bytes after `consumed` bytes of the last chunk belong to what follows it.
        case complete(upgradesToWebSocket: Bool, consumed: Int)
        /// No end within ``maxHeadBytes``.
        case tooLong
    }

    private var head: [UInt8] = []

    /// Adds the next bytes read.
    mutating func scan(_ bytes: some Collection<UInt8>) -> Outcome {
        var consumed = 0
        for byte in bytes {
            consumed += 1
            head.append(byte)
            if byte == UInt8(ascii: "\n"), head.count >= 4, head[head.count - 4] == UInt8(ascii: "\r"),
                head[head.count - 3] == UInt8(ascii: "\n"), head[head.count - 2] == UInt8(ascii: "\r")
            {
                return .complete(upgradesToWebSocket: asksForWebSocket(), consumed: consumed)
            }
            if head.count >= Self.maxHeadBytes { return .tooLong }
        }
        return .incomplete
    }

    /// Whether an `Upgrade` header names `websocket` (case-insensitive, as HTTP header names and this token are).
    private func asksForWebSocket() -> Bool {
        let text = String(decoding: head, as: UTF8.self).lowercased()
        for line in text.split(separator: "\r\n") where line.hasPrefix("upgrade:") {
            if line.dropFirst("upgrade:".count).contains("websocket") { return true }
        }
        return false
    }
}
