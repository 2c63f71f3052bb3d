import CallAPIServerTesting

#if canImport(Glibc)
    import CallAPISignalProtocol
    import NIOCore
    import Testing

    @testable import CallAPIServer

    /// The WebSocket transport both endpoints share: its frame encoding, and its handling of control frames and
    /// fragmented messages over real sockets.
    @Suite struct WebSocketTransportTests {
        @Test(arguments: [0, 125, 126, 65_535, 65_536])
        func textFramesCarryTheirLengthInTheShortestForm(length: Int) {
            var buffer = ByteBuffer()
            Array(repeating: UInt8(ascii: "a"), count: length).withUnsafeBytes {
                WebSocketServerFrame.writeText(utf8: $0, into: &buffer)
            }
            let bytes = Array(buffer.readableBytesView)
            let expectedHeader: [UInt8] =
                switch length {
                case 0...125: [0x81, UInt8(length)]
                case 126...65_535: [0x81, 126, UInt8(length >> 8), UInt8(length & 0xFF)]
                default: [0x81, 127] + (0..<8).reversed().map { UInt8((length >> ($0 * 8)) & 0xFF) }
                }
            #expect(Array(bytes.prefix(expectedHeader.count)) == expectedHeader)
            #expect(bytes.count == expectedHeader.count + length)
        }

        /// Text written in place within a bound: framed as the same text copied, the header in its shortest form
        /// even when the bound called for a longer one (the text is moved next to it).
        @Test(arguments: [
            (0, 0), (1, 1), (125, 125), (126, 125), (300, 10), (126, 126), (127, 127), (65_535, 65_535),
            (65_536, 65_535), (65_536, 126), (70_000, 100), (65_536, 65_536),
        ])
        func aTextWrittenInPlaceIsFramedAsTheSameTextCopied(bound: Int, length: Int) {
            let text = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            var copied = ByteBuffer()
            text.withUnsafeBytes { WebSocketServerFrame.writeText(utf8: $0, into: &copied) }
            var framed = ByteBuffer(bytes: [0x01, 0x02])
            var given = -1
            WebSocketServerFrame.writeText(atMost: bound, into: &framed) { memory in
                given = memory.count
                text.withUnsafeBytes { memory.copyMemory(from: $0) }
                return length
            }
            #expect(given == bound)
            #expect(Array(framed.readableBytesView) == [0x01, 0x02] + Array(copied.readableBytesView))
        }

        /// A text said to be longer than its bound stops the program: the frame would carry bytes never written.
        @Test func aTextLongerThanItsBoundStopsTheProgram() async {
            await #expect(processExitsWith: .failure) {
                var buffer = ByteBuffer()
                WebSocketServerFrame.writeText(atMost: 10, into: &buffer) { _ in 11 }
            }
        }

        @Test func aCloseFrameCarriesItsCodeAndAReasonCutToFit() {
            var buffer = ByteBuffer()
            WebSocketServerFrame.writeClose(code: 4001, reason: String(repeating: "r", count: 300), into: &buffer)
            let bytes = Array(buffer.readableBytesView)
            #expect(bytes.prefix(4) == [0x88, 125, 0x0F, 0xA1])
            #expect(bytes.count == 2 + 125)
        }

        @Test(arguments: [SignalProtocol.webSocketPath, ChannelProtocol.webSocketPath])
        func aPingIsAnsweredWithAPongCarryingItsData(path: String) async throws {
            let server = try await TestServer.start()
            let probe = try TCPProbe(port: server.port)
            try await probe.upgrade(path: path)
            try probe.write(TCPProbe.frame(opcode: 0x9, payload: [1, 2, 3]))
            let outcome = await probe.read(seconds: 10) { $0.count >= 5 }
            #expect(Array(outcome.bytes.prefix(5)) == [0x8A, 3, 1, 2, 3])
            probe.close()
            try await server.stop()
        }

        @Test func aFragmentedMessageIsReassembledBeforeItIsRead() async throws {
            let server = try await TestServer.start()
            let probe = try TCPProbe(port: server.port)
            try await probe.upgrade(path: SignalProtocol.webSocketPath)
            let ping = Array(FrameCoding.encode(ClientFrame.ping(.init(id: 7))).utf8)
            var first = TCPProbe.frame(opcode: 0x1, payload: Array(ping.prefix(5)))
            first[0] &= 0x7F  // not the final fragment
            try probe.write(first + TCPProbe.frame(opcode: 0x0, payload: Array(ping.dropFirst(5))))
            // Parsed whole: a ping before login is refused as such (a fragment alone would not be a frame).
            let outcome = await probe.read(seconds: 10) { String(decoding: $0, as: UTF8.self).contains("}") }
            #expect(String(decoding: outcome.bytes, as: UTF8.self).contains("not_logged_in"))
            probe.close()
            try await server.stop()
        }

        @Test func fragmentsAddingUpToMoreThanTheLimitCloseWith1009() async throws {
            let server = try await TestServer.start()
            let probe = try TCPProbe(port: server.port)
            try await probe.upgrade(path: SignalProtocol.webSocketPath)
            let chunk = [UInt8](repeating: 0x61, count: 600_000)
            var first = TCPProbe.frame(opcode: 0x1, payload: chunk)
            first[0] &= 0x7F
            var second = TCPProbe.frame(opcode: 0x0, payload: chunk)
            second[0] &= 0x7F
            try probe.write(first + second)
            let outcome = await probe.read(seconds: 10) { $0.count >= 4 }
            #expect(outcome.bytes.first == 0x88)
            #expect(Array(outcome.bytes.dropFirst(2).prefix(2)) == [0x03, 0xF1])
            probe.close()
            try await server.stop()
        }

        @Test func theClientsCloseCodeIsEchoedAndTheSocketCloses() async throws {
            let server = try await TestServer.start()
            let probe = try TCPProbe(port: server.port)
            try await probe.upgrade(path: SignalProtocol.webSocketPath)
            try probe.write(TCPProbe.frame(opcode: 0x8, payload: [0x0F, 0xA0]))
            let outcome = await probe.read(seconds: 10)
            #expect(Array(outcome.bytes.prefix(4)) == [0x88, 2, 0x0F, 0xA0])
            #expect(outcome.closed)
            probe.close()
            try await server.stop()
        }
    }
#endif
