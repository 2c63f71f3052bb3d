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

    /// Appends a text frame carrying `utf8`, masked with `key`.
    static func write(utf8: UnsafeRawBufferPointer, key: WebSocketMaskingKey, into buffer: inout ByteBuffer) {
        // The key's four bytes in memory order, as they go on the wire.
        var keyWord: UInt32 = 0
        withUnsafeMutableBytes(of: &keyWord) { bytes in
            for index in 0..<4 { bytes[index] = key[key.startIndex + index] }
        }
        let length = utf8.count
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: length + maxHeaderBytes) { out in
            out[0] = 0x80 | 0x1  // FIN, text
            var at: Int
            switch length {
            case 0...125:
                out[1] = 0x80 | UInt8(length)
                at = 2
            case 126...0xFFFF:
                out[1] = 0x80 | 126
                out.storeBytes(of: UInt16(length).bigEndian, toByteOffset: 2, as: UInt16.self)
                at = 4
            default:
                out[1] = 0x80 | 127
                out.storeBytes(of: UInt64(length).bigEndian, toByteOffset: 2, as: UInt64.self)
                at = 10
            }
            out.storeBytes(of: keyWord, toByteOffset: at, as: UInt32.self)
            at &+= 4
            WebSocketMasking.apply(utf8, key: keyWord, into: UnsafeMutableRawBufferPointer(rebasing: out[at...]))
            return at &+ length
        }
    }
}
