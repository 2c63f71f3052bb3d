import CallAPIServerCore
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
    /// given (`bound` bytes, right after room for the header) and whose length it gives: the text goes into the
    /// buffer without a copy, and without being counted first
    /// (``WebSocketFrameHeader/writeText(atMost:maskKey:into:text:)``).
    static func writeText(
        atMost bound: Int, into buffer: inout ByteBuffer, text: (UnsafeMutableRawBufferPointer) -> Int
    ) {
        let room = WebSocketFrameHeader.size(payloadLength: bound, masked: false) + bound
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: room) { bytes in
            WebSocketFrameHeader.writeText(atMost: bound, maskKey: nil, into: bytes, text: text)
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
        let length = min(payload.readableBytes, WebSocketFrameHeader.maxControlPayload)
        writeHeader(opcode: opcode, length: length, into: &buffer)
        buffer.writeImmutableBuffer(payload.readSlice(length: length) ?? ByteBuffer())
    }

    private static func writeHeader(opcode: UInt8, length: Int, into buffer: inout ByteBuffer) {
        buffer.reserveCapacity(minimumWritableBytes: length + largestHeaderSize)
        let size = WebSocketFrameHeader.size(payloadLength: length, masked: false)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { bytes in
            WebSocketFrameHeader.write(opcode: opcode, payloadLength: length, maskKey: nil, into: bytes)
            return size
        }
    }
}
