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
    /// The longest header: two bytes, a 64-bit length and the key.
    static let maxHeaderBytes = 14

    /// Appends a text frame of at most `bound` bytes of UTF-8 text, masked with `key`: `text` writes the text into
    /// the memory it is given (`bound` bytes, after room for the header) and gives its length, and it is masked
    /// where it lies. A frame encoder writes straight into the socket's buffer, without counting the text first.
    ///
    /// The header is sized for `bound`; when the text turns out short enough for a smaller one, the text is moved
    /// next to that header.
    static func write(
        atMost bound: Int, key: WebSocketMaskingKey, into buffer: inout ByteBuffer,
        text: (UnsafeMutableRawBufferPointer) -> Int
    ) {
        // The key's four bytes in memory order, as they go on the wire.
        var keyWord: UInt32 = 0
        withUnsafeMutableBytes(of: &keyWord) { bytes in
            for index in 0..<4 { bytes[index] = key[key.startIndex + index] }
        }
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bound + maxHeaderBytes) { out in
            let reserved = headerBytes(length: bound)
            let length = text(UnsafeMutableRawBufferPointer(rebasing: out[reserved..<(reserved &+ bound)]))
            precondition(length >= 0 && length <= bound, "a frame's text is longer than its bound")
            let at = headerBytes(length: length)
            if at < reserved, let start = out.baseAddress {
                // Overlapping when the text is longer than the difference: `copyMemory` moves as memmove does.
                (start + at).copyMemory(from: start + reserved, byteCount: length)
            }
            out[0] = 0x80 | 0x1  // FIN, text
            switch at {
            case 6:
                out[1] = 0x80 | UInt8(length)
            case 8:
                out[1] = 0x80 | 126
                out.storeBytes(of: UInt16(length).bigEndian, toByteOffset: 2, as: UInt16.self)
            default:
                out[1] = 0x80 | 127
                out.storeBytes(of: UInt64(length).bigEndian, toByteOffset: 2, as: UInt64.self)
            }
            out.storeBytes(of: keyWord, toByteOffset: at &- 4, as: UInt32.self)
            let payload = UnsafeMutableRawBufferPointer(rebasing: out[at..<(at &+ length)])
            WebSocketMasking.apply(UnsafeRawBufferPointer(payload), key: keyWord, into: payload)
            return at &+ length
        }
    }

    /// The bytes before the payload of a frame carrying `length` bytes: the length in its shortest form, and the key.
    private static func headerBytes(length: Int) -> Int {
        switch length {
        case 0...125: 6
        case 126...0xFFFF: 8
        default: maxHeaderBytes
        }
    }
}
