import CallAPISignalProtocol
import NIOCore

/// Server-to-client WebSocket frames (RFC 6455 §5.2), written straight into an outgoing buffer: unmasked, unfragmented.
enum WebSocketServerFrame {
    /// Appends a text frame holding `utf8` (valid UTF-8: the caller's encoder wrote it).
    static func writeText(utf8: UnsafeRawBufferPointer, into buffer: inout ByteBuffer) {
        writeHeader(opcode: FrameOpcode.text, length: utf8.count, into: &buffer)
        buffer.writeBytes(utf8)
    }

    /// The most a frame header takes (a 64-bit length).
    static let largestHeaderSize = 10

    /// Appends a text frame of at most `bound` bytes of UTF-8 text, which `text` writes into the memory it is
    /// given (`bound` bytes, right after the header) and whose length it gives: the text goes into the buffer
    /// without a copy, and without being counted first.
    ///
    /// The header is sized for `bound`; when the text turns out short enough for a smaller one, the text is moved
    /// next to that header (at most 125 bytes, or 65,535 for a frame bounded past that).
    static func writeText(
        atMost bound: Int, into buffer: inout ByteBuffer, text: (UnsafeMutableRawBufferPointer) -> Int
    ) {
        let reserved = headerSize(length: bound)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: reserved + bound) { bytes in
            let count = text(UnsafeMutableRawBufferPointer(rebasing: bytes[reserved..<(reserved + bound)]))
            precondition(count >= 0 && count <= bound, "a frame's text is longer than its bound")
            let size = headerSize(length: count)
            if size < reserved, let start = bytes.baseAddress {
                // Overlapping when the text is longer than the difference: `copyMemory` moves as memmove does.
                (start + size).copyMemory(from: start + reserved, byteCount: count)
            }
            fillHeader(
                opcode: FrameOpcode.text, length: count, into: UnsafeMutableRawBufferPointer(rebasing: bytes[..<size]))
            return size + count
        }
    }

    /// Appends a close frame with `code` and an optional reason (cut to fit a control frame's 125 bytes).
    static func writeClose(code: UInt16, reason: String?, into buffer: inout ByteBuffer) {
        let reason = Array((reason ?? "").utf8.prefix(123))
        writeHeader(opcode: FrameOpcode.close, length: 2 + reason.count, into: &buffer)
        buffer.writeInteger(code)
        buffer.writeBytes(reason)
    }

    /// Appends a control frame (ping or pong) carrying `payload` (at most 125 bytes).
    static func writeControl(opcode: UInt8, payload: ByteBuffer, into buffer: inout ByteBuffer) {
        var payload = payload
        let length = min(payload.readableBytes, 125)
        writeHeader(opcode: opcode, length: length, into: &buffer)
        buffer.writeImmutableBuffer(payload.readSlice(length: length) ?? ByteBuffer())
    }

    private static func writeHeader(opcode: UInt8, length: Int, into buffer: inout ByteBuffer) {
        buffer.reserveCapacity(minimumWritableBytes: length + largestHeaderSize)
        let size = headerSize(length: length)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { bytes in
            fillHeader(opcode: opcode, length: length, into: UnsafeMutableRawBufferPointer(rebasing: bytes[..<size]))
            return size
        }
    }

    /// The bytes the header of a frame carrying `length` bytes takes: the length in the shortest form.
    private static func headerSize(length: Int) -> Int {
        switch length {
        case 0...125: 2
        case 126...0xFFFF: 4
        default: largestHeaderSize
        }
    }

    /// Writes the header of a final, unmasked frame of `opcode` carrying `length` bytes into `bytes`, which is
    /// exactly ``headerSize(length:)`` long.
    private static func fillHeader(opcode: UInt8, length: Int, into bytes: UnsafeMutableRawBufferPointer) {
        bytes[0] = 0x80 | opcode
        switch bytes.count {
        case 2:
            bytes[1] = UInt8(length)
        case 4:
            bytes[1] = 126
            bytes[2] = UInt8(truncatingIfNeeded: length >> 8)
            bytes[3] = UInt8(truncatingIfNeeded: length)
        default:
            bytes[1] = 127
            for index in 0..<8 { bytes[2 + index] = UInt8(truncatingIfNeeded: length >> (56 - 8 * index)) }
        }
    }
}
