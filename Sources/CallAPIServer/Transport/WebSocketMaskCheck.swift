/// Follows the frame headers of a client's WebSocket byte stream and finds the first frame that is not masked.
///
/// RFC 6455 §5.1: a server must close the connection on an unmasked client frame. The WebSocket library this
/// server uses unmasks what it gets without checking, so the connection guard runs this over the raw bytes.
/// A pure byte scanner; it only reads headers and skips payloads, keeping no more than a 14-byte header.
struct WebSocketMaskCheck: Sendable {
    private var header: [UInt8] = []
    /// Payload bytes of the current frame still to skip.
    private var remaining: UInt64 = 0

    /// Adds the next bytes read; `false` once a frame without a mask has been seen.
    mutating func scan(_ bytes: some Collection<UInt8>) -> Bool {
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if remaining > 0 {
                let available = UInt64(bytes.distance(from: index, to: bytes.endIndex))
                let skip = min(remaining, available)
                index = bytes.index(index, offsetBy: Int(skip))
                remaining -= skip
                continue
            }
            header.append(bytes[index])
            index = bytes.index(after: index)
            guard header.count >= 2 else { continue }
            guard header[1] & 0x80 != 0 else { return false }
            let length7 = header[1] & 0x7F
            let lengthBytes = length7 == 127 ? 8 : length7 == 126 ? 2 : 0
            guard header.count == 2 + lengthBytes + 4 else { continue }
            var length = UInt64(length7)
            if lengthBytes > 0 {
                length = header[2..<(2 + lengthBytes)].reduce(0) { $0 << 8 | UInt64($1) }
            }
            remaining = length
            header.removeAll(keepingCapacity: true)
        }
        return true
    }
}
