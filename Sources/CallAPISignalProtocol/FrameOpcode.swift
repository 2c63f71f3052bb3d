/// WebSocket opcodes (RFC 6455 §5.2), for the frames both ends read and write.
package enum FrameOpcode {
    package static let continuation: UInt8 = 0x0
    package static let text: UInt8 = 0x1
    package static let binary: UInt8 = 0x2
    package static let close: UInt8 = 0x8
    package static let ping: UInt8 = 0x9
    package static let pong: UInt8 = 0xA
}
