/// The header of a WebSocket frame (RFC 6455 §5.2), read from the front of a connection's bytes and checked as
/// both ends check it: the server reads clients' frames, which are masked, and the client reads the server's,
/// which are not (§5.1). No extension is negotiated, so the reserved bits are zero.
package struct WebSocketFrameHeader: Equatable, Sendable {
    package var fin: Bool
    package var opcode: UInt8
    /// A masked frame's key: its four bytes as they came, loaded in memory order.
    package var maskKey: UInt32?
    package var payloadLength: Int
    /// The header's own length: where the payload starts.
    package var size: Int

    /// What the front of a connection's bytes holds.
    package enum Reading: Equatable, Sendable {
        case header(WebSocketFrameHeader)
        /// The bytes end inside the header: read again with more of them.
        case incomplete
        /// The frame breaks the protocol or the size limit: the connection closes with the refusal's code.
        case refused(Refusal)
    }

    /// Why a frame closes its connection.
    package enum Refusal: Equatable, Sendable {
        /// §5.1: every client frame is masked.
        case unmasked
        /// §5.1: no server frame is.
        case masked
        /// No extension is negotiated, so the reserved bits are zero (§5.2).
        case reservedBits
        case unknownOpcode(UInt8)
        /// Control frames are not fragmented and carry at most 125 bytes (§5.5).
        case fragmentedControlFrame
        case longControlFrame
        /// The payload is over the reader's limit (refused from the header, before it is buffered).
        case tooLarge(declared: UInt64)

        /// The close code: 1009 for a message over the limit, 1002 (protocol error) for the rest.
        package var closeCode: UInt16 {
            if case .tooLarge = self { 1009 } else { 1002 }
        }

        /// The close frame's reason (none for an unmasked client frame: that client is not speaking WebSocket).
        package var reason: String? {
            switch self {
            case .unmasked: nil
            case .masked: "masked server frame"
            case .reservedBits: "reserved bits set"
            case .unknownOpcode: "unknown opcode"
            case .fragmentedControlFrame: "fragmented control frame"
            case .longControlFrame: "control frame over 125 bytes"
            case .tooLarge: "message too large"
            }
        }
    }

    /// The most a header takes: two bytes, an eight-byte length and a four-byte key.
    package static let maxSize = 14

    /// Reads the header at the start of `bytes` (only its first ``maxSize`` bytes are looked at). `masked`: the
    /// frames must be masked (a server reading a client) or must not be (a client reading the server).
    package static func read(_ bytes: UnsafeRawBufferPointer, masked: Bool, maxPayloadBytes: Int) -> Reading {
        guard bytes.count >= 2 else { return .incomplete }
        let first = bytes[0]
        let second = bytes[1]
        guard (second & 0x80 != 0) == masked else { return .refused(masked ? .unmasked : .masked) }
        guard first & 0x70 == 0 else { return .refused(.reservedBits) }
        let fin = first & 0x80 != 0
        let opcode = first & 0x0F
        switch opcode {
        case FrameOpcode.continuation, FrameOpcode.text, FrameOpcode.binary:
            break
        case FrameOpcode.close, FrameOpcode.ping, FrameOpcode.pong:
            guard fin else { return .refused(.fragmentedControlFrame) }
            guard Int(second & 0x7F) <= Self.maxControlPayload else { return .refused(.longControlFrame) }
        default:
            return .refused(.unknownOpcode(opcode))
        }
        let length: UInt64
        var size: Int
        switch second & 0x7F {
        case 126:
            guard bytes.count >= 4 else { return .incomplete }
            (length, size) = (UInt64(UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: 2, as: UInt16.self))), 4)
        case 127:
            guard bytes.count >= 10 else { return .incomplete }
            (length, size) = (UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 2, as: UInt64.self)), 10)
        case let short:
            (length, size) = (UInt64(short), 2)
        }
        // Before waiting for the payload: a declared length over the limit is never buffered.
        guard length <= UInt64(maxPayloadBytes) else { return .refused(.tooLarge(declared: length)) }
        var maskKey: UInt32?
        if masked {
            guard bytes.count >= size + 4 else { return .incomplete }
            maskKey = bytes.loadUnaligned(fromByteOffset: size, as: UInt32.self)
            size += 4
        }
        return .header(
            WebSocketFrameHeader(fin: fin, opcode: opcode, maskKey: maskKey, payloadLength: Int(length), size: size))
    }
}
