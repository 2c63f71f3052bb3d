import NIOCore

/// Takes the server's WebSocket frames (RFC 6455 §5.2) off the front of the bytes a client socket has read.
///
/// NIO's `WebSocketFrameDecoder`, behind its `ByteToMessageHandler`, cost the bench's clients ~9,500 of the
/// ~97,000 instructions they spent per relayed message (callgrind, docs/benchmarks.md): a frame value and a
/// handler hop per frame, and a buffer kept across reads. Here a frame's payload is a slice of the bytes read, and
/// only a frame split across reads is kept.
///
/// Refused, as the RFC says a client must: reserved bits set (no extension is negotiated), a masked frame (a
/// server never masks), an opcode the RFC does not define, a control frame that is fragmented or longer than 125
/// bytes, and a frame longer than `maxPayload`, refused from its header before its payload is read.
struct ServerFrameReader {
    /// The largest payload a data frame may carry.
    let maxPayload: Int

    enum Opcode: UInt8 {
        case continuation = 0x0
        case text = 0x1
        case binary = 0x2
        case close = 0x8
        case ping = 0x9
        case pong = 0xA

        var isControl: Bool { rawValue & 0x8 != 0 }
    }

    struct Frame {
        var fin: Bool
        var opcode: Opcode
        /// The payload, a slice of the bytes read (a server's frames are not masked).
        var payload: ByteBuffer
    }

    enum Failure: Error, Equatable {
        case reservedBitsSet
        case masked
        case unknownOpcode(UInt8)
        case fragmentedControlFrame
        case controlFrameTooLong(Int)
        /// The frame's length as its header gives it (or, for a fragmented message, the length so far).
        case tooLarge(UInt64)
        /// A data frame began a message before the last fragmented one ended (found by the reader's user, which
        /// follows messages).
        case messageInterrupted
        /// A continuation frame came with no fragmented message in progress (found by the reader's user).
        case continuationWithoutMessage
    }

    /// Takes the next whole frame off the front of `bytes`; nil, with `bytes` untouched, when the frame's bytes
    /// have not all arrived yet. A frame the RFC refuses throws as soon as its header shows it.
    func next(from bytes: inout ByteBuffer) throws(Failure) -> Frame? {
        let start = bytes.readerIndex
        guard let first = bytes.getInteger(at: start, as: UInt8.self),
            let second = bytes.getInteger(at: start + 1, as: UInt8.self)
        else { return nil }
        guard first & 0x70 == 0 else { throw .reservedBitsSet }
        guard second & 0x80 == 0 else { throw .masked }
        guard let opcode = Opcode(rawValue: first & 0x0F) else { throw .unknownOpcode(first & 0x0F) }
        let fin = first & 0x80 != 0
        var headerLength = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard let extended = bytes.getInteger(at: start + 2, as: UInt16.self) else { return nil }
            length = UInt64(extended)
            headerLength = 4
        } else if length == 127 {
            guard let extended = bytes.getInteger(at: start + 2, as: UInt64.self) else { return nil }
            length = extended
            headerLength = 10
        }
        if opcode.isControl {
            guard fin else { throw .fragmentedControlFrame }
            guard length <= 125 else { throw .controlFrameTooLong(Int(clamping: length)) }
        } else {
            guard length <= UInt64(maxPayload) else { throw .tooLarge(length) }
        }
        let payloadLength = Int(length)
        guard bytes.readableBytes >= headerLength + payloadLength else { return nil }
        bytes.moveReaderIndex(forwardBy: headerLength)
        // Present: checked just above.
        let payload = bytes.readSlice(length: payloadLength)!
        return Frame(fin: fin, opcode: opcode, payload: payload)
    }
}
