import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import CallAPISignalClient

/// The client's own text framing against NIO's encoder, which it replaces for text frames.
@Suite struct MaskedTextFrameTests {
    /// What NIO's `WebSocketFrameEncoder` writes for the same frame and key, its buffers joined.
    private func framedByNIO(_ payload: [UInt8], key: WebSocketMaskingKey) throws -> [UInt8] {
        let channel = EmbeddedChannel(handler: WebSocketFrameEncoder())
        try channel.writeAndFlush(
            WebSocketFrame(fin: true, opcode: .text, maskKey: key, data: ByteBuffer(bytes: payload))
        ).wait()
        var bytes: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += Array(buffer.readableBytesView) }
        return bytes
    }

    /// `payload` framed by ours, written in place within `bound`.
    private func framedByUs(_ payload: [UInt8], bound: Int, key: WebSocketMaskingKey, after prefix: [UInt8]) -> [UInt8]
    {
        var ours = ByteBuffer(bytes: prefix)
        MaskedTextFrame.write(atMost: bound, key: key, into: &ours) { memory in
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
            MaskedTextFrame.write(atMost: 4, key: .random(), into: &buffer) { _ in 5 }
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
