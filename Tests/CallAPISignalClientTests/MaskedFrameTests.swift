import CallAPISignalProtocol
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import CallAPISignalClient

/// The client's own framing against NIO's encoder, which it replaces.
@Suite struct MaskedFrameTests {
    /// What NIO's `WebSocketFrameEncoder` writes for the same frame and key, its buffers joined.
    private func framedByNIO(
        _ payload: [UInt8], key: WebSocketMaskingKey, opcode: WebSocketOpcode = .text
    ) throws -> [UInt8] {
        let channel = EmbeddedChannel(handler: WebSocketFrameEncoder())
        try channel.writeAndFlush(
            WebSocketFrame(fin: true, opcode: opcode, maskKey: key, data: ByteBuffer(bytes: payload))
        ).wait()
        var bytes: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += Array(buffer.readableBytesView) }
        return bytes
    }

    /// `payload` framed by ours, written in place within `bound`.
    private func framedByUs(_ payload: [UInt8], bound: Int, key: WebSocketMaskingKey, after prefix: [UInt8]) -> [UInt8]
    {
        var ours = ByteBuffer(bytes: prefix)
        MaskedFrame.writeText(atMost: bound, key: key, into: &ours) { memory in
            payload.withUnsafeBytes { memory.copyMemory(from: $0) }
            return payload.count
        }
        return Array(ours.readableBytesView)
    }

    /// Every length, within a bound of its own size or a larger one that called for a longer header (the text is
    /// moved next to the shorter one).
    @Test(arguments: [
        (0, 0), (1, 1), (3, 3), (7, 7), (8, 8), (9, 9), (15, 15), (16, 16), (17, 17), (125, 125), (126, 126),
        (127, 127), (300, 300), (65_535, 65_535), (65_536, 65_536), (126, 125), (900, 17), (65_536, 65_535),
        (65_536, 126), (70_000, 40),
    ])
    func aTextFrameIsByteForByteWhatNIOsEncoderWrites(bound: Int, length: Int) throws {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for key in [WebSocketMaskingKey([0x12, 0x34, 0xAB, 0xCD])!, WebSocketMaskingKey([0, 0, 0, 0])!] {
            let ours = framedByUs(payload, bound: bound, key: key, after: [0xEE])
            #expect(ours == [0xEE] + (try framedByNIO(payload, key: key)))
        }
    }

    @Test func aTextLongerThanItsBoundStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            var buffer = ByteBuffer()
            MaskedFrame.writeText(atMost: 4, key: .random(), into: &buffer) { _ in 5 }
        }
    }

    /// Close, ping and pong frames, empty, with a close code, and as long as a control frame may be.
    @Test(arguments: [
        (FrameOpcode.close, WebSocketOpcode.connectionClose, 0), (FrameOpcode.close, .connectionClose, 2),
        (FrameOpcode.pong, .pong, 0), (FrameOpcode.pong, .pong, 9), (FrameOpcode.pong, .pong, 125),
        (FrameOpcode.ping, .ping, 125),
    ])
    func aControlFrameIsByteForByteWhatNIOsEncoderWrites(opcode: UInt8, nioOpcode: WebSocketOpcode, length: Int)
        throws
    {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        let key = WebSocketMaskingKey([0x9A, 0x01, 0xFF, 0x42])!
        var ours = ByteBuffer(bytes: [0xEE])
        MaskedFrame.writeControl(opcode: opcode, payload: ByteBuffer(bytes: payload), key: key, into: &ours)
        #expect(Array(ours.readableBytesView) == [0xEE] + (try framedByNIO(payload, key: key, opcode: nioOpcode)))
    }

    @Test func aControlPayloadOver125BytesStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            var buffer = ByteBuffer()
            MaskedFrame.writeControl(
                opcode: FrameOpcode.pong, payload: ByteBuffer(repeating: 1, count: 126), key: .random(), into: &buffer)
        }
    }

    @Test func theServersReaderUnmasksItBack() throws {
        let text = Array(#"{"type":"send","id":1,"to":"1002","body":"é and more"}"#.utf8)
        let frame = ByteBuffer(bytes: framedByUs(text, bound: text.count * 6, key: .random(), after: []))
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder()))
        try channel.writeInbound(frame)
        let decoded = try channel.readInbound(as: WebSocketFrame.self)
        #expect(decoded.map { Array($0.unmaskedData.readableBytesView) } == text)
        #expect(decoded?.maskKey != nil)
    }
}
