import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import CallAPIServer

/// The per-loop ping sweep that replaced a timer per connection: driven on an embedded event loop, whose clock
/// the test advances by hand.
@Suite struct PingSweepTests {
    /// A connection behind the real session handler and flusher, on a loop whose time only moves when told.
    private struct Harness {
        let loop = EmbeddedEventLoop()
        let channel: EmbeddedChannel
        let endpoint = RecordingEndpoint()

        init() throws {
            channel = EmbeddedChannel(loop: loop)
            let writer = RawFrameWriter()
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(writer)
            try pipeline.addHandler(
                WebSocketSessionHandler(
                    endpoint: endpoint, writer: try pipeline.context(handler: writer),
                    flusher: LoopFlusher(eventLoop: loop)))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        }

        /// The opcodes of the frames written since the last call.
        func writtenOpcodes() throws -> [UInt8] {
            var opcodes: [UInt8] = []
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
                var buffer = buffer
                while let first = buffer.readInteger(as: UInt8.self), let second = buffer.readInteger(as: UInt8.self) {
                    opcodes.append(first & 0x0F)
                    buffer.moveReaderIndex(forwardBy: Int(second & 0x7F))
                }
            }
            return opcodes
        }

        func receive(_ opcode: WebSocketOpcode) throws {
            try channel.writeInbound(WebSocketFrame(fin: true, opcode: opcode, data: ByteBuffer()))
        }
    }

    @Test func anIdleConnectionIsPingedOncePerSweepAndNotBefore() throws {
        let harness = try Harness()
        harness.loop.advanceTime(by: LoopFlusher.pingInterval - .seconds(1))
        #expect(try harness.writtenOpcodes() == [])
        harness.loop.advanceTime(by: .seconds(1))
        #expect(try harness.writtenOpcodes() == [WebSocketServerFrame.pingOpcode])
        #expect(harness.channel.isActive)
    }

    @Test func aConnectionThatNeitherAnswersNorSendsIsClosedAtTheNextSweep() throws {
        let harness = try Harness()
        harness.loop.advanceTime(by: LoopFlusher.pingInterval)
        #expect(try harness.writtenOpcodes() == [WebSocketServerFrame.pingOpcode])
        harness.loop.advanceTime(by: LoopFlusher.pingInterval)
        #expect(!harness.channel.isActive)
        #expect(harness.endpoint.closedSessions == [RecordingEndpoint.sessionID])
    }

    @Test(arguments: [WebSocketOpcode.pong, .text])
    func aConnectionThatAnswersOrSendsIsPingedAgainInsteadOfClosed(reply: WebSocketOpcode) throws {
        let harness = try Harness()
        harness.loop.advanceTime(by: LoopFlusher.pingInterval)
        _ = try harness.writtenOpcodes()
        try harness.receive(reply)
        harness.loop.advanceTime(by: LoopFlusher.pingInterval)
        #expect(try harness.writtenOpcodes() == [WebSocketServerFrame.pingOpcode])
        #expect(harness.channel.isActive)
        #expect(harness.endpoint.closedSessions == [])
    }
}

/// A session endpoint that only records what the transport tells it.
private final class RecordingEndpoint: SessionEndpoint {
    static let sessionID = SessionID(1)
    private let closed = NIOLockedValueBox<[SessionID]>([])

    var closedSessions: [SessionID] { closed.withLockedValue { $0 } }
    var maxMessageBytes: Int { 1024 }

    func open(channel: any Channel, flusher: LoopFlusher) -> WebSocketConnection {
        WebSocketConnection(id: Self.sessionID, channel: channel, flusher: flusher, tally: WriteTally(), metrics: nil)
    }

    func received(text: String, on id: SessionID, at instant: ContinuousClock.Instant) -> Bool { true }
    func receivedBinary(on id: SessionID) {}
    func closed(_ id: SessionID) { closed.withLockedValue { $0.append(id) } }
}
