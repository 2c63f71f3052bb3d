import CallAPISignalProtocol
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

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
            try channel.pipeline.syncOperations.addHandler(
                WebSocketSessionHandler(endpoint: endpoint, flusher: LoopFlusher(eventLoop: loop)))
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

        /// A masked client frame with an empty payload.
        func receive(_ opcode: UInt8) throws {
            try channel.writeInbound(ByteBuffer(bytes: [0x80 | opcode, 0x80, 1, 2, 3, 4]))
        }
    }

    @Test func anIdleConnectionIsPingedOncePerSweepAndNotBefore() throws {
        let harness = try Harness()
        harness.loop.advanceTime(by: LoopFlusher.pingInterval - .seconds(1))
        #expect(try harness.writtenOpcodes() == [])
        harness.loop.advanceTime(by: .seconds(1))
        #expect(try harness.writtenOpcodes() == [FrameOpcode.ping])
        #expect(harness.channel.isActive)
    }

    @Test func aConnectionThatNeitherAnswersNorSendsIsClosedAtTheNextSweep() throws {
        let harness = try Harness()
        harness.loop.advanceTime(by: LoopFlusher.pingInterval)
        #expect(try harness.writtenOpcodes() == [FrameOpcode.ping])
        harness.loop.advanceTime(by: LoopFlusher.pingInterval)
        #expect(!harness.channel.isActive)
        #expect(harness.endpoint.closedSessions == [RecordingEndpoint.sessionID])
    }

    @Test(arguments: [FrameOpcode.pong, FrameOpcode.text])
    func aConnectionThatAnswersOrSendsIsPingedAgainInsteadOfClosed(reply: UInt8) throws {
        let harness = try Harness()
        harness.loop.advanceTime(by: LoopFlusher.pingInterval)
        _ = try harness.writtenOpcodes()
        try harness.receive(reply)
        harness.loop.advanceTime(by: LoopFlusher.pingInterval)
        #expect(try harness.writtenOpcodes() == [FrameOpcode.ping])
        #expect(harness.channel.isActive)
        #expect(harness.endpoint.closedSessions == [])
    }
}
