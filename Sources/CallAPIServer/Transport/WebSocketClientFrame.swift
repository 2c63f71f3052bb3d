import NIOCore

/// One frame from a WebSocket client (RFC 6455 §5.2), read from the front of a connection's bytes: its header
/// checked, its payload still masked until it is copied where it is used (``unmask(into:)``).
///
/// The server reads client frames itself instead of through NIO's decoder: NIO's decoder did not check the mask
/// bit (a separate scan of every byte did), copied each payload into a buffer of its own to unmask it, and cost two
/// more handlers per connection; see docs/benchmarks.md, "Frames read in place".
struct WebSocketClientFrame {
    var fin: Bool
    var opcode: UInt8
    /// The masking key's four bytes, in the order they came (RFC 6455 §5.3).
    var maskKey: UInt32
    /// The masked payload: a slice of the bytes read.
    var payload: ByteBuffer

    /// What the front of a connection's bytes holds.
    enum Reading {
        case frame(WebSocketClientFrame)
        /// The bytes end inside a frame: read again with more of them.
        case incomplete
        /// The frame breaks the protocol or the size limit: the connection closes with the refusal's code.
        case refused(Refusal)
    }

    /// Why a client frame closes its connection.
    enum Refusal: Equatable {
        /// RFC 6455 §5.1: every client frame is masked.
        case unmasked
        /// No extension is negotiated, so the reserved bits are zero (§5.2).
        case reservedBits
        case unknownOpcode(UInt8)
        /// Control frames are not fragmented and carry at most 125 bytes (§5.5).
        case fragmentedControlFrame
        case longControlFrame
        /// The payload is over the endpoint's message limit (refused from the header, before it is buffered).
        case tooLarge(declared: UInt64)

        /// The close code: 1009 for a message over the limit, 1002 (protocol error) for the rest.
        var closeCode: UInt16 {
            if case .tooLarge = self { 1009 } else { 1002 }
        }

        /// The close frame's reason (none for an unmasked frame: the client is not speaking WebSocket).
        var reason: String? {
            switch self {
            case .unmasked: nil
            case .reservedBits: "reserved bits set"
            case .unknownOpcode: "unknown opcode"
            case .fragmentedControlFrame: "fragmented control frame"
            case .longControlFrame: "control frame over 125 bytes"
            case .tooLarge: "message too large"
            }
        }
    }

    /// Reads the frame at the front of `bytes`, moving past it; on `.incomplete` or `.refused`, `bytes` is
    /// unchanged.
    static func read(from bytes: inout ByteBuffer, maxPayloadBytes: Int) -> Reading {
        let start = bytes.readerIndex
        guard let first = bytes.getInteger(at: start, as: UInt8.self),
            let second = bytes.getInteger(at: start + 1, as: UInt8.self)
        else { return .incomplete }
        guard second & 0x80 != 0 else { return .refused(.unmasked) }
        guard first & 0x70 == 0 else { return .refused(.reservedBits) }
        let fin = first & 0x80 != 0
        let opcode = first & 0x0F
        switch opcode {
        case FrameOpcode.continuation, FrameOpcode.text, FrameOpcode.binary:
            break
        case FrameOpcode.close, FrameOpcode.ping, FrameOpcode.pong:
            guard fin else { return .refused(.fragmentedControlFrame) }
            guard second & 0x7F <= 125 else { return .refused(.longControlFrame) }
        default:
            return .refused(.unknownOpcode(opcode))
        }
        let length: UInt64
        let keyOffset: Int
        switch second & 0x7F {
        case 126:
            guard let word = bytes.getInteger(at: start + 2, as: UInt16.self) else { return .incomplete }
            (length, keyOffset) = (UInt64(word), 4)
        case 127:
            guard let word = bytes.getInteger(at: start + 2, as: UInt64.self) else { return .incomplete }
            (length, keyOffset) = (word, 10)
        case let short:
            (length, keyOffset) = (UInt64(short), 2)
        }
        // Before waiting for the payload: a declared length over the limit is never buffered.
        guard length <= UInt64(maxPayloadBytes) else { return .refused(.tooLarge(declared: length)) }
        guard let maskKey = bytes.getInteger(at: start + keyOffset, endianness: .host, as: UInt32.self),
            let payload = bytes.getSlice(at: start + keyOffset + 4, length: Int(length))
        else { return .incomplete }
        bytes.moveReaderIndex(to: start + keyOffset + 4 + Int(length))
        return .frame(WebSocketClientFrame(fin: fin, opcode: opcode, maskKey: maskKey, payload: payload))
    }

    /// Writes the unmasked payload to the start of `destination` (at least ``payload``'s readable bytes long).
    func unmask(into destination: UnsafeMutableRawBufferPointer) {
        payload.withUnsafeReadableBytes { Self.unmask($0, key: maskKey, into: destination) }
    }

    /// Appends the unmasked payload to `buffer`.
    func appendUnmasked(to buffer: inout ByteBuffer) {
        let count = payload.readableBytes
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { destination in
            unmask(into: destination)
            return count
        }
    }

    /// The unmasked payload as a buffer of its own.
    func unmasked(allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: payload.readableBytes)
        appendUnmasked(to: &buffer)
        return buffer
    }

    /// XORs `source` with the repeated four key bytes into `destination`, eight bytes at a time.
    static func unmask(_ source: UnsafeRawBufferPointer, key: UInt32, into destination: UnsafeMutableRawBufferPointer) {
        precondition(destination.count >= source.count, "the destination is shorter than the payload")
        // `key` holds the four bytes in memory order, so two copies of it hold them twice, whatever the byte order.
        let wideKey = UInt64(key) | UInt64(key) << 32
        var index = 0
        while index + 8 <= source.count {
            let word = source.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ wideKey
            destination.storeBytes(of: word, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        withUnsafeBytes(of: key) { keyBytes in
            while index < source.count {
                destination[index] = source[index] ^ keyBytes[index & 3]
                index += 1
            }
        }
    }
}
