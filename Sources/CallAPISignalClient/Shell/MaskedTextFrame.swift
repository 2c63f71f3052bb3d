import NIOCore
import NIOWebSocket

/// A client's text frame (RFC 6455 §5.2): unfragmented, its payload masked with a key of the sender's choosing,
/// written in one piece into the buffer the socket writes.
///
/// NIO's `WebSocketFrameEncoder` masks byte by byte and writes the header as a buffer of its own: for a relayed
/// message that was ~13,000 of the ~125,000 instructions both bench clients spent on it (callgrind,
/// docs/benchmarks.md). Here eight bytes are masked per step.
enum MaskedTextFrame {
    /// Appends a text frame carrying `utf8`, masked with `key`.
    static func write(utf8: UnsafeRawBufferPointer, key: WebSocketMaskingKey, into buffer: inout ByteBuffer) {
        let length = utf8.count
        buffer.reserveCapacity(minimumWritableBytes: length + 14)
        buffer.writeInteger(UInt8(0x80 | 0x1))
        switch length {
        case 0...125:
            buffer.writeInteger(UInt8(0x80 | length))
        case 126...0xFFFF:
            buffer.writeInteger(UInt8(0x80 | 126))
            buffer.writeInteger(UInt16(length))
        default:
            buffer.writeInteger(UInt8(0x80 | 127))
            buffer.writeInteger(UInt64(length))
        }
        buffer.writeBytes(key)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: length) { target in
            mask(utf8, with: key, into: target)
            return length
        }
    }

    /// `source` XOR the key repeated, byte `i` with key byte `i % 4`, into `target` (at least as long).
    private static func mask(
        _ source: UnsafeRawBufferPointer, with key: WebSocketMaskingKey, into target: UnsafeMutableRawBufferPointer
    ) {
        guard let from = source.baseAddress, let to = target.baseAddress else { return }
        // The key four times over, as bytes in memory: a word of the payload lines up with it at every multiple
        // of eight, whatever the machine's byte order.
        var wordKey: UInt64 = 0
        withUnsafeMutableBytes(of: &wordKey) { bytes in
            for index in 0..<8 { bytes[index] = key[key.startIndex + index % 4] }
        }
        var index = 0
        while index &+ 8 <= source.count {
            let masked = from.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ wordKey
            (to + index).storeBytes(of: masked, as: UInt64.self)
            index &+= 8
        }
        while index < source.count {
            let byte = from.load(fromByteOffset: index, as: UInt8.self) ^ key[key.startIndex + index % 4]
            to.storeBytes(of: byte, toByteOffset: index, as: UInt8.self)
            index &+= 1
        }
    }
}
