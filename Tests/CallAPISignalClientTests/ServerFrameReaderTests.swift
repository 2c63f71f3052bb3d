import CallAPISignalProtocol
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import CallAPISignalClient

/// The client's reader of the server's frames against NIO's encoder (what a server writes), whole and split
/// anywhere, and the frames RFC 6455 says a client must refuse.
@Suite struct ServerFrameReaderTests {
    private let reader = ServerFrameReader(maxPayload: 1 << 20)

    /// What NIO's `WebSocketFrameEncoder` writes for an unmasked frame (as a server sends it), its buffers joined.
    private func framedByNIO(_ opcode: WebSocketOpcode, fin: Bool = true, _ payload: [UInt8]) throws -> [UInt8] {
        let channel = EmbeddedChannel(handler: WebSocketFrameEncoder())
        try channel.writeAndFlush(WebSocketFrame(fin: fin, opcode: opcode, data: ByteBuffer(bytes: payload))).wait()
        var bytes: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += Array(buffer.readableBytesView) }
        return bytes
    }

    @Test(arguments: [0, 1, 125, 126, 127, 300, 65_535, 65_536, 70_000])
    func aServersDataFrameIsReadWholeAndNotBeforeItsLastByte(length: Int) throws {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        let opcodes: [(WebSocketOpcode, UInt8)] = [
            (.text, FrameOpcode.text), (.binary, FrameOpcode.binary), (.continuation, FrameOpcode.continuation),
        ]
        for (opcode, expected) in opcodes {
            let bytes = try framedByNIO(opcode, fin: length % 2 == 0, payload)
            var whole = ByteBuffer(bytes: bytes)
            let frame = try #require(try reader.next(from: &whole))
            #expect(frame.opcode == expected)
            #expect(frame.fin == (length % 2 == 0))
            #expect(Array(frame.payload.readableBytesView) == payload)
            #expect(whole.readableBytes == 0)
            // Every prefix short of the whole frame reads as "not yet", and is left as it was.
            for cut in [0, 1, 2, 3, 4, 9, 10, bytes.count - 1] where cut < bytes.count {
                var prefix = ByteBuffer(bytes: bytes[..<cut])
                #expect(try reader.next(from: &prefix) == nil)
                #expect(prefix.readableBytes == cut)
            }
        }
    }

    @Test func controlFramesAndSeveralFramesInOneReadComeOutInOrder() throws {
        var bytes = try framedByNIO(.ping, Array("are you there".utf8))
        bytes += try framedByNIO(.text, Array(#"{"type":"pong","serverTime":1}"#.utf8))
        bytes += try framedByNIO(.connectionClose, [0x03, 0xE8])
        bytes += Array(try framedByNIO(.text, Array("the next read".utf8)).prefix(5))
        var buffer = ByteBuffer(bytes: bytes)
        var read: [(UInt8, [UInt8])] = []
        while let frame = try reader.next(from: &buffer) {
            read.append((frame.opcode, Array(frame.payload.readableBytesView)))
        }
        #expect(read.map(\.0) == [FrameOpcode.ping, FrameOpcode.text, FrameOpcode.close])
        #expect(
            read.map(\.1) == [
                Array("are you there".utf8), Array(#"{"type":"pong","serverTime":1}"#.utf8), [0x03, 0xE8],
            ])
        #expect(buffer.readableBytes == 5)
    }

    @Test(
        arguments: [
            ([0xC1, 0x00], WebSocketFrameHeader.Refusal.reservedBits),
            ([0x91, 0x00], .reservedBits),
            ([0x81, 0x85, 1, 2, 3, 4], .masked),
            ([0x83, 0x00], .unknownOpcode(3)),
            ([0x8B, 0x00], .unknownOpcode(0xB)),
            ([0x09, 0x00], .fragmentedControlFrame),
            ([0x89, 0x7E, 0x00, 0x7E], .longControlFrame),
            // Refused from the header alone: the payload has not arrived.
            ([0x81, 0x7F, 0, 0, 0, 0, 0, 0x10, 0, 1], .tooLarge(declared: 1_048_577)),
            ([0x82, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], .tooLarge(declared: UInt64.max)),
        ] as [([UInt8], WebSocketFrameHeader.Refusal)])
    func framesTheRFCRefusesAreRefused(bytes: [UInt8], refusal: WebSocketFrameHeader.Refusal) {
        var buffer = ByteBuffer(bytes: bytes)
        #expect(throws: ServerFrameReader.Failure.refused(refusal)) { try reader.next(from: &buffer) }
        #expect(buffer.readableBytes == bytes.count)
    }

    @Test func aFrameOfExactlyTheLimitIsRead() throws {
        let limited = ServerFrameReader(maxPayload: 300)
        var buffer = ByteBuffer(bytes: try framedByNIO(.text, [UInt8](repeating: 0x61, count: 300)))
        #expect(try limited.next(from: &buffer)?.payload.readableBytes == 300)
        var over = ByteBuffer(bytes: try framedByNIO(.text, [UInt8](repeating: 0x61, count: 301)))
        #expect(throws: ServerFrameReader.Failure.refused(.tooLarge(declared: 301))) {
            try limited.next(from: &over)
        }
    }
}
