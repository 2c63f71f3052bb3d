import CallAPISignalProtocol
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// When the loop's flusher writes what endpoints queue: at the end of the reads that queued it, or in a loop task
/// for what is queued anywhere else. Driven on an embedded loop, whose tasks run only when told.
@Suite struct LoopFlusherTests {
    /// An endpoint that answers every text with the same text on the connection it came from.
    private final class EchoEndpoint: SessionEndpoint {
        let maxMessageBytes = 1024
        let connection = NIOLockedValueBox<WebSocketConnection?>(nil)

        func open(channel: any Channel, flusher: LoopFlusher) -> WebSocketConnection {
            let opened = WebSocketConnection(
                id: SessionID(1), channel: channel, flusher: flusher, tally: WriteTally(), metrics: nil)
            connection.withLockedValue { $0 = opened }
            return opened
        }

        func received(utf8 text: UnsafeBufferPointer<UInt8>, on id: SessionID, at instant: NIODeadline)
            -> Bool
        {
            connection.withLockedValue { $0 }?.send(text: String(decoding: text, as: UTF8.self))
            return true
        }
        func receivedBinary(on id: SessionID) {}
        func closed(_ id: SessionID) {}
    }

    private let loop = EmbeddedEventLoop()
    private let channel: EmbeddedChannel
    private let endpoint = EchoEndpoint()
    private let flusher: LoopFlusher

    init() throws {
        channel = EmbeddedChannel(loop: loop)
        flusher = LoopFlusher(eventLoop: loop)
        try channel.pipeline.syncOperations.addHandler(WebSocketSessionHandler(endpoint: endpoint, flusher: flusher))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
    }

    /// A masked client text frame carrying `text` (at most 125 bytes).
    private func textFrame(_ text: String) -> ByteBuffer {
        let mask: [UInt8] = [1, 2, 3, 4]
        let payload = Array(text.utf8).enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return ByteBuffer(bytes: [0x81, 0x80 | UInt8(payload.count)] + mask + payload)
    }

    /// The texts of the text frames written since the last call.
    private func writtenTexts() throws -> [String] {
        var texts: [String] = []
        while var buffer = try channel.readOutbound(as: ByteBuffer.self) {
            while let first = buffer.readInteger(as: UInt8.self), let length = buffer.readInteger(as: UInt8.self),
                let payload = buffer.readString(length: Int(length))
            {
                if first & 0x0F == FrameOpcode.text { texts.append(payload) }
            }
        }
        return texts
    }

    @Test func whatAConnectionsReadsQueueIsWrittenWhenTheReadsCompleteWithoutALoopTask() throws {
        channel.pipeline.fireChannelRead(textFrame("one"))
        channel.pipeline.fireChannelRead(textFrame("two"))
        #expect(try writtenTexts() == [])
        channel.pipeline.fireChannelReadComplete()
        // No `loop.run()`: no task is needed for them.
        #expect(try writtenTexts() == ["one", "two"])
    }

    @Test func whatIsQueuedOutsideReadsIsWrittenByALoopTask() throws {
        endpoint.connection.withLockedValue { $0 }?.send(text: "tick")
        #expect(try writtenTexts() == [])
        loop.run()
        #expect(try writtenTexts() == ["tick"])
    }

    @Test func whatReadsQueuedIsWrittenWhenTheReadFailsInsteadOfCompleting() throws {
        channel.pipeline.fireChannelRead(textFrame("last"))
        channel.pipeline.fireErrorCaught(ChannelError.ioOnClosedChannel)
        #expect(try writtenTexts() == ["last"])
    }

    @Test func aConnectionClosedDuringItsReadsLeavesTheLoopWritingOthersByTask() throws {
        let other = EchoEndpoint()
        let otherChannel = EmbeddedChannel(loop: loop)
        try otherChannel.pipeline.syncOperations.addHandler(WebSocketSessionHandler(endpoint: other, flusher: flusher))
        try otherChannel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        channel.pipeline.fireChannelRead(textFrame("cut"))
        _ = channel.close()
        // Its reads never complete; the other connection's frame must not wait for them.
        other.connection.withLockedValue { $0 }?.send(text: "other")
        loop.run()
        var written: [UInt8] = []
        while let buffer = try otherChannel.readOutbound(as: ByteBuffer.self) {
            written += Array(buffer.readableBytesView)
        }
        #expect(written == [0x81, 5] + Array("other".utf8))
    }

    /// The memory a buffer lends its bytes from: which storage it is.
    private static func memory(of buffer: ByteBuffer) -> UnsafeRawPointer? {
        buffer.withVeryUnsafeBytes { $0.baseAddress }
    }

    @Test func writtenBuffersAreKeptEmptyForTheLoopsNextFramesUpToALimit() {
        let allocator = ByteBufferAllocator()
        var written = flusher.buffer(capacity: 64, allocator: allocator)
        written.writeString("sent")
        let kept = Self.memory(of: written)
        flusher.recycle(consume written)
        let next = flusher.buffer(capacity: 64, allocator: allocator)
        #expect(Self.memory(of: next) == kept)
        #expect(next.readableBytes == 0)

        // Too large to keep.
        flusher.recycle(allocator.buffer(capacity: LoopFlusher.keptBufferBytes + 1))
        #expect(flusher.buffer(capacity: 1, allocator: allocator).capacity <= LoopFlusher.keptBufferBytes)

        // At most `keptBuffers`: the rest are let go. (Told apart by capacity, not memory: malloc reuses what is
        // let go for the new ones.)
        var many = (0..<(LoopFlusher.keptBuffers + 8)).map { _ in allocator.buffer(capacity: 16) }
        while let buffer = many.popLast() { flusher.recycle(consume buffer) }
        let taken = (0..<(LoopFlusher.keptBuffers + 8)).map { _ in flusher.buffer(capacity: 1, allocator: allocator) }
        #expect(taken.filter { $0.capacity == 16 }.count == LoopFlusher.keptBuffers)
        #expect(taken.allSatisfy { $0.readableBytes == 0 })
    }

    @Test func framesStillHeldByTheChannelAreNeverOverwrittenByLaterOnes() throws {
        channel.pipeline.fireChannelRead(textFrame("first"))
        channel.pipeline.fireChannelReadComplete()
        // The embedded channel holds the first write until it is read: its buffer is not the flusher's to reuse.
        channel.pipeline.fireChannelRead(textFrame("second"))
        channel.pipeline.fireChannelReadComplete()
        #expect(try writtenTexts() == ["first", "second"])
    }
}
