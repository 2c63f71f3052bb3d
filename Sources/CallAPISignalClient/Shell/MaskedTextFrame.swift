import CallAPISignalProtocol
import NIOCore
import NIOWebSocket

/// A client's text frame (RFC 6455 §5.2): unfragmented, its payload masked with a key of the sender's choosing,
/// written in one piece into the buffer the socket writes.
///
/// NIO's `WebSocketFrameEncoder` masks byte by byte and writes the header as a buffer of its own: for a relayed
/// message that was ~13,000 of the ~125,000 instructions both bench clients spent on it (callgrind,
/// docs/benchmarks.md). Here the header, key and masked payload go in with one capacity check, eight payload bytes
/// per step.
enum MaskedTextFrame {
    /// Appends a text frame of at most `bound` bytes of UTF-8 text, masked with `key`: `text` writes the text into
    /// the memory it is given (`bound` bytes, after room for the header) and gives its length, and it is masked
    /// where it lies (``WebSocketFrameHeader/writeText(atMost:maskKey:into:text:)``).
    static func write(
        atMost bound: Int, key: WebSocketMaskingKey, into buffer: inout ByteBuffer,
        text: (UnsafeMutableRawBufferPointer) -> Int
    ) {
        // The key's four bytes in memory order, as they go on the wire.
        var keyWord: UInt32 = 0
        withUnsafeMutableBytes(of: &keyWord) { bytes in
            for index in 0..<4 { bytes[index] = key[key.startIndex + index] }
        }
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bound + WebSocketFrameHeader.maxSize) { out in
            WebSocketFrameHeader.writeText(atMost: bound, maskKey: keyWord, into: out, text: text)
        }
    }
}
