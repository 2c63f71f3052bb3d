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

    @Test(arguments: [0, 1, 3, 7, 8, 9, 15, 16, 17, 125, 126, 127, 300, 65_535, 65_536])
    func aTextFrameIsByteForByteWhatNIOsEncoderWrites(length: Int) throws {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for key in [WebSocketMaskingKey([0x12, 0x34, 0xAB, 0xCD])!, WebSocketMaskingKey([0, 0, 0, 0])!] {
            var ours = ByteBuffer(bytes: [0xEE])
            payload.withUnsafeBytes { MaskedTextFrame.write(utf8: $0, key: key, into: &ours) }
            #expect(Array(ours.readableBytesView) == [0xEE] + (try framedByNIO(payload, key: key)))
        }
    }

    @Test func theServersReaderUnmasksItBack() throws {
        let text = Array(#"{"type":"send","id":1,"to":"1002","body":"é and more"}"#.utf8)
        var frame = ByteBuffer()
        text.withUnsafeBytes { MaskedTextFrame.write(utf8: $0, key: .random(), into: &frame) }
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder()))
        try channel.writeInbound(frame)
        let decoded = try channel.readInbound(as: WebSocketFrame.self)
        #expect(decoded.map { Array($0.unmaskedData.readableBytesView) } == text)
        #expect(decoded?.maskKey != nil)
    }
}
