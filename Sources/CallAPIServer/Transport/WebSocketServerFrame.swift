import NIOCore

/// Server-to-client WebSocket frames (RFC 6455 §5.2), written straight into an outgoing buffer: unmasked, unfragmented.
enum WebSocketServerFrame {
    /// Appends a text frame holding `utf8` (valid UTF-8: the caller's encoder wrote it).
    static func writeText(utf8: UnsafeRawBufferPointer, into buffer: inout ByteBuffer) {
        writeHeader(opcode: FrameOpcode.text, length: utf8.count, into: &buffer)
        buffer.writeBytes(utf8)
    }

    /// The most a frame header takes (a 64-bit length): the room left in front of a text encoded for
    /// ``writeText(room:into:)``.
    static let headerRoom = 10

    /// Appends a text frame whose UTF-8 text follows ``headerRoom`` bytes of `room`: the header is written into
    /// the end of the room, and header and text are copied in one piece.
    static func writeText(room text: inout [UInt8], into buffer: inout ByteBuffer) {
        text.withUnsafeMutableBytes { bytes in
            let length = bytes.count - headerRoom
            let start: Int
            switch length {
            case 0...125:
                start = headerRoom - 2
                bytes[start + 1] = UInt8(length)
            case 126...0xFFFF:
                start = headerRoom - 4
                bytes[start + 1] = 126
                bytes[start + 2] = UInt8(truncatingIfNeeded: length >> 8)
                bytes[start + 3] = UInt8(truncatingIfNeeded: length)
            default:
                start = 0
                bytes[1] = 127
                for index in 0..<8 { bytes[2 + index] = UInt8(truncatingIfNeeded: length >> (56 - 8 * index)) }
            }
            bytes[start] = 0x80 | FrameOpcode.text
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[start...]))
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
        buffer.reserveCapacity(minimumWritableBytes: length + 10)
        buffer.writeInteger(0x80 | opcode)
        switch length {
        case 0...125:
            buffer.writeInteger(UInt8(length))
        case 126...0xFFFF:
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(length))
        default:
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(length))
        }
    }
}
