import CallAPISignalProtocol
import CallAPITesting
import NIOCore
import NIOEmbedded
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// Reading client frames from the socket's bytes: headers checked before a payload is waited for, payloads
/// unmasked where they are used; and the session handler that reads them.
@Suite struct WebSocketClientFrameTests {
    /// A client frame's bytes: `first` is the FIN/RSV/opcode byte; masked with `key` unless it is nil.
    static func frame(
        first: UInt8, payload: [UInt8], key: [UInt8]? = [0x37, 0xFA, 0x21, 0x3D], declaredLength: UInt64? = nil
    ) -> [UInt8] {
        let length = declaredLength ?? UInt64(payload.count)
        let maskBit: UInt8 = key == nil ? 0 : 0x80
        var bytes = [first]
        switch length {
        case 0...125: bytes.append(maskBit | UInt8(length))
        case 126...0xFFFF: bytes += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        default: bytes += [maskBit | 127] + (0..<8).reversed().map { UInt8((length >> ($0 * 8)) & 0xFF) }
        }
        guard let key else { return bytes + payload }
        return bytes + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    private static func read(_ bytes: [UInt8], limit: Int = 1 << 20) -> (WebSocketClientFrame.Reading, ByteBuffer) {
        var buffer = ByteBuffer(bytes: bytes)
        return (WebSocketClientFrame.read(from: &buffer, maxPayloadBytes: limit), buffer)
    }

    private static func unmasked(_ reading: WebSocketClientFrame.Reading) -> [UInt8]? {
        guard case .frame(let frame) = reading else { return nil }
        var buffer = frame.unmasked(allocator: ByteBufferAllocator())
        return buffer.readBytes(length: buffer.readableBytes)
    }

    @Test(arguments: [0, 1, 7, 8, 9, 125, 126, 65_535, 65_536])
    func aMaskedFrameOfEveryLengthEncodingReadsBackItsPayload(length: Int) {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let bytes = Self.frame(first: 0x81, payload: payload) + [0x89, 0x80]
        let (reading, rest) = Self.read(bytes)
        #expect(Self.unmasked(reading) == payload)
        if case .frame(let frame) = reading { #expect(frame.fin && frame.opcode == FrameOpcode.text) }
        // Only the frame is consumed: the next frame's first bytes stay.
        #expect(rest.readableBytes == 2)
    }

    @Test func aFrameCutAnywhereIsIncompleteAndLeavesTheBytesUntouched() {
        let bytes = Self.frame(first: 0x82, payload: Array(repeating: 0xAB, count: 300))
        for cut in 0..<bytes.count {
            let (reading, rest) = Self.read(Array(bytes.prefix(cut)))
            guard case .incomplete = reading else {
                Issue.record("cut at \(cut) of \(bytes.count) read as \(reading)")
                return
            }
            #expect(rest.readableBytes == cut)
        }
        #expect(Self.unmasked(Self.read(bytes).0) == Array(repeating: 0xAB, count: 300))
    }

    @Test func framesInOneReadAreReadOneAfterAnother() {
        let bytes =
            Self.frame(first: 0x01, payload: Array("he".utf8)) + Self.frame(first: 0x89, payload: [1, 2])
            + Self.frame(first: 0x80, payload: Array("llo".utf8))
        var buffer = ByteBuffer(bytes: bytes)
        var read: [(UInt8, Bool, [UInt8])] = []
        while case .frame(let frame) = WebSocketClientFrame.read(from: &buffer, maxPayloadBytes: 100) {
            var payload = frame.unmasked(allocator: ByteBufferAllocator())
            read.append((frame.opcode, frame.fin, payload.readBytes(length: payload.readableBytes) ?? []))
        }
        #expect(read.map(\.0) == [FrameOpcode.text, FrameOpcode.ping, FrameOpcode.continuation])
        #expect(read.map(\.1) == [false, true, true])
        #expect(read.map(\.2) == [Array("he".utf8), [1, 2], Array("llo".utf8)])
        #expect(buffer.readableBytes == 0)
    }

    @Test func unmaskingMatchesByteByByteXorAtEveryLengthAndOffset() {
        let key: UInt32 = 0x9A3C_71E5
        let keyBytes = withUnsafeBytes(of: key) { Array($0) }
        let source = (0..<67).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 3) }
        for start in 0..<5 {
            for length in 0...(source.count - start) {
                let slice = Array(source[start..<(start + length)])
                var output = [UInt8](repeating: 0, count: length)
                slice.withUnsafeBytes { input in
                    output.withUnsafeMutableBytes { WebSocketMasking.apply(input, key: key, into: $0) }
                }
                #expect(output == slice.enumerated().map { $0.element ^ keyBytes[$0.offset % 4] })
            }
        }
    }

    @Test func anUnmaskedFrameIsRefused() {
        let (reading, rest) = Self.read(Self.frame(first: 0x81, payload: Array("hi".utf8), key: nil))
        guard case .refused(let refusal) = reading else {
            Issue.record("read as \(reading)")
            return
        }
        #expect(refusal == .unmasked && refusal.closeCode == 1002 && refusal.reason == nil)
        #expect(rest.readableBytes == 4)
    }

    @Test(arguments: [
        (UInt8(0xC1), WebSocketClientFrame.Refusal.reservedBits),
        (0xA1, .reservedBits),
        (0x91, .reservedBits),
        (0x83, .unknownOpcode(3)),
        (0x8B, .unknownOpcode(0xB)),
        (0x09, .fragmentedControlFrame),
        (0x08, .fragmentedControlFrame),
    ])
    func aFrameThatBreaksTheProtocolIsRefusedWith1002(first: UInt8, refusal: WebSocketClientFrame.Refusal) {
        let (reading, _) = Self.read(Self.frame(first: first, payload: [1]))
        guard case .refused(let found) = reading else {
            Issue.record("read as \(reading)")
            return
        }
        #expect(found == refusal && found.closeCode == 1002)
    }

    @Test func aControlFrameOver125BytesIsRefusedFromItsHeader() {
        let (reading, _) = Self.read(Array(Self.frame(first: 0x89, payload: Array(repeating: 0, count: 126)).prefix(2)))
        guard case .refused(let found) = reading else {
            Issue.record("read as \(reading)")
            return
        }
        #expect(found == .longControlFrame)
    }

    @Test(arguments: [UInt64(1025), 65_536, UInt64(Int.max), UInt64.max])
    func aDeclaredLengthOverTheLimitIsRefusedWith1009BeforeThePayloadArrives(declared: UInt64) {
        // Only the header: the refusal does not wait for (or buffer) a single payload byte.
        let header = Self.frame(first: 0x81, payload: [], key: nil, declaredLength: declared)
        let bytes = [header[0], header[1] | 0x80] + header.dropFirst(2) + [1, 2, 3, 4]
        let (reading, rest) = Self.read(bytes, limit: 1024)
        guard case .refused(let found) = reading else {
            Issue.record("read as \(reading)")
            return
        }
        #expect(found == .tooLarge(declared: declared) && found.closeCode == 1009)
        #expect(rest.readableBytes == bytes.count)
    }

    @Test func aPayloadAtTheLimitIsRead() {
        let (reading, _) = Self.read(Self.frame(first: 0x82, payload: Array(repeating: 7, count: 1024)), limit: 1024)
        #expect(Self.unmasked(reading) == Array(repeating: 7, count: 1024))
    }

    // MARK: - The session handler reading them

    /// The real session handler on an embedded channel.
    private struct Harness {
        let channel = EmbeddedChannel()
        let endpoint = RecordingEndpoint()

        init() throws {
            try channel.pipeline.syncOperations.addHandler(
                WebSocketSessionHandler(endpoint: endpoint, flusher: LoopFlusher(eventLoop: channel.embeddedEventLoop)))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        }

        func receive(_ bytes: [UInt8]) throws { try channel.writeInbound(ByteBuffer(bytes: bytes)) }

        /// What the handler wrote since the last call (the loop's flush runs first).
        func written() throws -> [UInt8] {
            channel.embeddedEventLoop.run()
            var bytes: [UInt8] = []
            while var buffer = try channel.readOutbound(as: ByteBuffer.self) {
                bytes += buffer.readBytes(length: buffer.readableBytes) ?? []
            }
            return bytes
        }
    }

    @Test func aMessageArrivingAByteAtATimeIsDeliveredOnceWhole() throws {
        let harness = try Harness()
        let text = "{\"type\":\"ping\",\"id\":1,\"note\":\"héllo\"}"
        let bytes =
            Self.frame(first: 0x81, payload: Array(text.utf8)) + Self.frame(first: 0x81, payload: Array("x".utf8))
        for byte in bytes { try harness.receive([byte]) }
        #expect(harness.endpoint.receivedTexts == [text, "x"])
    }

    @Test func fragmentsAndAnInterleavedPingMakeOneMessageAndAPong() throws {
        let harness = try Harness()
        try harness.receive(
            Self.frame(first: 0x01, payload: Array("ab".utf8)) + Self.frame(first: 0x89, payload: [9, 8])
                + Self.frame(first: 0x00, payload: Array("cd".utf8)) + Self.frame(first: 0x80, payload: Array("e".utf8))
        )
        #expect(harness.endpoint.receivedTexts == ["abcde"])
        #expect(try harness.written() == [0x80 | FrameOpcode.pong, 2, 9, 8])
    }

    @Test func anUnmaskedFrameClosesWith1002AndNothingAfterItIsRead() throws {
        let harness = try Harness()
        try harness.receive(
            Self.frame(first: 0x81, payload: Array("a".utf8), key: nil)
                + Self.frame(first: 0x81, payload: Array("b".utf8)))
        #expect(harness.endpoint.receivedTexts == [])
        #expect(try harness.written() == [0x88, 0x02, 0x03, 0xEA])
        try harness.receive(Self.frame(first: 0x81, payload: Array("c".utf8)))
        #expect(harness.endpoint.receivedTexts == [])
    }

    @Test func aFrameDeclaredOverTheLimitClosesWith1009() throws {
        let harness = try Harness()
        try harness.receive(Array(Self.frame(first: 0x81, payload: Array(repeating: 0x61, count: 2000)).prefix(8)))
        let written = try harness.written()
        #expect(Array(written.prefix(4)) == [0x88, UInt8(2 + "message too large".utf8.count), 0x03, 0xF1])
        #expect(harness.endpoint.receivedTexts == [])
    }

    @Test(arguments: 0..<20 as Range<UInt64>)
    func messagesInRandomFragmentsAndRandomReadsArriveWholeAndInOrder(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let harness = try Harness()
        var stream: [UInt8] = []
        var expected: [String] = []
        for _ in 0..<30 {
            let ascii = (0..<Int.random(in: 0...600, using: &random)).map { _ in
                Character(Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &random)))
            }
            // Multi-byte characters too, which fragments may cut in the middle.
            let text = String(ascii) + (random.chance(0.3) ? "é€😀" : "")
            expected.append(text)
            var rest = Array(text.utf8)[...]
            var opcode = FrameOpcode.text
            repeat {
                let chunk = rest.prefix(Int.random(in: 0...200, using: &random))
                rest = rest.dropFirst(chunk.count)
                let key = (0..<4).map { _ in UInt8.random(in: 0...255, using: &random) }
                stream += Self.frame(first: (rest.isEmpty ? 0x80 : 0) | opcode, payload: Array(chunk), key: key)
                opcode = FrameOpcode.continuation
                if !rest.isEmpty, random.chance(0.2) { stream += Self.frame(first: 0x89, payload: [1, 2, 3]) }
            } while !rest.isEmpty
        }
        var index = 0
        while index < stream.count {
            let count = min(stream.count - index, Int.random(in: 1...700, using: &random))
            try harness.receive(Array(stream[index..<(index + count)]))
            index += count
        }
        #expect(harness.endpoint.receivedTexts == expected)
    }

    @Test(arguments: 0..<20 as Range<UInt64>)
    func randomBytesEndInAtMostOneCloseAfterWhichNothingIsRead(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let harness = try Harness()
        // Garbage with a masked-frame look now and then, so that some of it parses before it breaks a rule.
        var garbage: [UInt8] = []
        while garbage.count < 3000 {
            if random.chance(0.3) {
                let payload = (0..<Int.random(in: 0...40, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
                garbage += Self.frame(first: UInt8.random(in: 0...255, using: &random), payload: payload)
            } else {
                garbage.append(UInt8.random(in: 0...255, using: &random))
            }
        }
        var index = 0
        while index < garbage.count {
            let count = min(garbage.count - index, Int.random(in: 1...300, using: &random))
            try harness.receive(Array(garbage[index..<(index + count)]))
            index += count
        }
        var written = ByteBuffer(bytes: try harness.written())
        var closes = 0
        // Only pongs and closes are written here, each at most 125 bytes of payload.
        while let first = written.readInteger(as: UInt8.self), let length = written.readInteger(as: UInt8.self) {
            if first & 0x0F == FrameOpcode.close { closes += 1 }
            written.moveReaderIndex(forwardBy: min(Int(length), written.readableBytes))
        }
        #expect(closes <= 1)
        if closes == 1 {
            let before = harness.endpoint.receivedTexts.count
            try harness.receive(Self.frame(first: 0x81, payload: Array("after".utf8)))
            #expect(harness.endpoint.receivedTexts.count == before)
        }
    }

    /// Text is checked as ASCII eight bytes at a time first: a non-ASCII byte anywhere, after or inside a long
    /// ASCII run, must still reach the full UTF-8 check.
    @Test(arguments: [0, 1, 7, 8, 9, 15, 16, 17, 40])
    func textBeyondASCIIIsCheckedAsUTF8WhereverItStarts(asciiBefore: Int) throws {
        let ascii = Array(repeating: UInt8(ascii: "a"), count: asciiBefore)
        let valid = try Harness()
        try valid.receive(Self.frame(first: 0x81, payload: ascii + Array("é😀".utf8) + ascii))
        #expect(
            valid.endpoint.receivedTexts == [
                String(decoding: ascii, as: UTF8.self) + "é😀" + String(decoding: ascii, as: UTF8.self)
            ])
        // The first three bytes of a four-byte sequence: repaired, it would be as long as it is.
        let truncated = try Harness()
        try truncated.receive(Self.frame(first: 0x81, payload: ascii + [0xF0, 0x9F, 0x98] + ascii))
        #expect(truncated.endpoint.receivedTexts == [])
        #expect(Array(try truncated.written().prefix(2)) == [0x88, UInt8(2 + "text is not UTF-8".utf8.count)])
    }

    @Test func textThatIsNotUTF8ClosesWith1007() throws {
        let harness = try Harness()
        try harness.receive(Self.frame(first: 0x81, payload: [0x7B, 0xFF, 0xFE, 0x7D]))
        #expect(
            Array(try harness.written().prefix(4)) == [0x88, UInt8(2 + "text is not UTF-8".utf8.count), 0x03, 0xEF])
        #expect(harness.endpoint.receivedTexts == [])
    }
}
