/// WebSocket opcodes (RFC 6455 §5.2), for the frames the server reads and writes.
enum FrameOpcode {
    static let continuation: UInt8 = 0x0
    static let text: UInt8 = 0x1
    static let binary: UInt8 = 0x2
    static let close: UInt8 = 0x8
    static let ping: UInt8 = 0x9
    static let pong: UInt8 = 0xA
}
