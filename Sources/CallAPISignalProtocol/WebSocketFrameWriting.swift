/// Writing frames (RFC 6455 §5.2), for both ends: the server's unmasked, the client's masked. Final frames only;
/// nothing here fragments.
extension WebSocketFrameHeader {
    /// The most a control frame (close, ping, pong) carries (§5.5): what the header reader refuses above, and what
    /// both ends write at most.
    package static let maxControlPayload = 125

    /// The length of the header of a frame carrying `payloadLength` bytes: the length in its shortest form (§5.2
    /// asks for it), and the key when the frame is masked.
    package static func size(payloadLength: Int, masked: Bool) -> Int {
        let lengthBytes =
            switch payloadLength {
            case 0...125: 2
            case 126...0xFFFF: 4
            default: 10
            }
        return masked ? lengthBytes + 4 : lengthBytes
    }

    /// Writes the header of a final frame of `opcode` carrying `payloadLength` bytes at the start of `memory`,
    /// which is at least ``size(payloadLength:masked:)`` long; `maskKey` in memory order, as it goes on the wire.
    package static func write(
        opcode: UInt8, payloadLength: Int, maskKey: UInt32?, into memory: UnsafeMutableRawBufferPointer
    ) {
        let maskBit: UInt8 = maskKey == nil ? 0 : 0x80
        memory[0] = 0x80 | opcode
        var at = 2
        switch payloadLength {
        case 0...125:
            memory[1] = maskBit | UInt8(payloadLength)
        case 126...0xFFFF:
            memory[1] = maskBit | 126
            memory.storeBytes(of: UInt16(payloadLength).bigEndian, toByteOffset: 2, as: UInt16.self)
            at = 4
        default:
            memory[1] = maskBit | 127
            memory.storeBytes(of: UInt64(payloadLength).bigEndian, toByteOffset: 2, as: UInt64.self)
            at = 10
        }
        if let maskKey { memory.storeBytes(of: maskKey, toByteOffset: at, as: UInt32.self) }
    }

    /// Writes a final text frame of at most `bound` bytes of UTF-8 text at the start of `memory`, which is at least
    /// `size(payloadLength: bound, masked:) + bound` long, and gives the frame's length. `text` writes the text into
    /// the memory it is given (`bound` bytes, after room for the header) and gives its length; with `maskKey`, it
    /// is then masked where it lies. So a frame encoder writes straight into a socket's buffer, without counting
    /// the text first.
    ///
    /// The header is sized for `bound`; when the text turns out short enough for a smaller one, the text is moved
    /// next to that header. Text said to be longer than `bound` stops the program.
    package static func writeText(
        atMost bound: Int, maskKey: UInt32?, into memory: UnsafeMutableRawBufferPointer,
        text: (UnsafeMutableRawBufferPointer) -> Int
    ) -> Int {
        let masked = maskKey != nil
        let reserved = size(payloadLength: bound, masked: masked)
        let length = text(UnsafeMutableRawBufferPointer(rebasing: memory[reserved..<(reserved &+ bound)]))
        precondition(length >= 0 && length <= bound, "a frame's text is longer than its bound")
        let at = size(payloadLength: length, masked: masked)
        if at < reserved, let start = memory.baseAddress {
            // Overlapping when the text is longer than the difference: `copyMemory` moves as memmove does.
            (start + at).copyMemory(from: start + reserved, byteCount: length)
        }
        write(opcode: FrameOpcode.text, payloadLength: length, maskKey: maskKey, into: memory)
        if let maskKey {
            let payload = UnsafeMutableRawBufferPointer(rebasing: memory[at..<(at &+ length)])
            WebSocketMasking.apply(UnsafeRawBufferPointer(payload), key: maskKey, into: payload)
        }
        return at &+ length
    }
}
