import CallAPISignalProtocol
import NIOCore
import NIOWebSocket

/// A client's frame (RFC 6455 §5.2): final, its payload masked with a key of the sender's choosing, written in one
/// piece into the buffer the socket writes. Every frame the client sends is written here; NIO's
/// `WebSocketFrameEncoder` is not in the pipeline.
///
/// That encoder masked byte by byte and wrote the header as a buffer of its own: for a relayed message that was
/// ~13,000 of the ~125,000 instructions both bench clients spent on it (callgrind, docs/benchmarks.md). Here the
/// header, key and masked payload go in with one capacity check, eight payload bytes per step. Once it only
/// wrote control frames, passing each read request of the connection on cost more than it saved.
enum MaskedFrame {
    /// Appends a text frame of at most `bound` bytes of UTF-8 text, masked with `key`: `text` writes the text into
    /// the memory it is given (`bound` bytes, after room for the header) and gives its length, and it is masked
    /// where it lies (``WebSocketFrameHeader/writeText(atMost:maskKey:into:text:)``).
    static func writeText(
        atMost bound: Int, key: WebSocketMaskingKey, into buffer: inout ByteBuffer,
        text: (UnsafeMutableRawBufferPointer) -> Int
    ) {
        let keyWord = word(key)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bound + WebSocketFrameHeader.maxSize) { out in
            WebSocketFrameHeader.writeText(atMost: bound, maskKey: keyWord, into: out, text: text)
        }
    }

    /// Appends a control frame (`FrameOpcode.close`, `.ping` or `.pong`) carrying `payload`, masked with `key`.
    /// A payload over `WebSocketFrameHeader.maxControlPayload` bytes stops the program: the callers send a close
    /// code or echo a ping the reader let through, which are shorter.
    static func writeControl(
        opcode: UInt8, payload: ByteBuffer, key: WebSocketMaskingKey, into buffer: inout ByteBuffer
    ) {
        let length = payload.readableBytes
        precondition(
            length <= WebSocketFrameHeader.maxControlPayload, "a control frame's payload is over 125 bytes")
        let keyWord = word(key)
        let headerSize = WebSocketFrameHeader.size(payloadLength: length, masked: true)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: headerSize + length) { out in
            WebSocketFrameHeader.write(opcode: opcode, payloadLength: length, maskKey: keyWord, into: out)
            payload.withUnsafeReadableBytes { source in
                WebSocketMasking.apply(
                    source, key: keyWord,
                    into: UnsafeMutableRawBufferPointer(rebasing: out[headerSize..<(headerSize + length)]))
            }
            return headerSize + length
        }
    }

    /// The key's four bytes in memory order, as they go on the wire.
    private static func word(_ key: WebSocketMaskingKey) -> UInt32 {
        var keyWord: UInt32 = 0
        withUnsafeMutableBytes(of: &keyWord) { bytes in
            for index in 0..<4 { bytes[index] = key[key.startIndex + index] }
        }
        return keyWord
    }
}
