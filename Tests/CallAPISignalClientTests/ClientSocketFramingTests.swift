import Crypto
import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing

@testable import CallAPISignalClient

/// The client's socket reads frames itself (``ServerFrameReader``), so what NIO used to do for it is checked over a
/// real socket against a raw server that writes exactly the bytes each test needs.
@Suite(.timeLimit(.minutes(1))) struct ClientSocketFramingTests {
    @Test func framesInTheSameWriteAsTheUpgradeResponseAreRead() async throws {
        // The 101, a ping and two text messages (one in two fragments) leave in one write, so they are read together.
        var after = Self.frame(0x89, Array("hi".utf8))
        after += Self.frame(0x81, Array("first".utf8))
        after += Self.frame(0x01, Array("sec".utf8)) + Self.frame(0x80, Array("ond".utf8))
        let server = try await RawUpgradeServer.start(sending: after)
        let client = try await SocketProbe.connect(to: server.port)
        #expect(await client.events(untilTexts: 2) == [.text("first"), .text("second")])
        // The ping was answered: the server read a masked pong carrying "hi".
        #expect(await server.clientFrame(opcode: 0xA) == Array("hi".utf8))
        await client.close()
        try await server.stop()
    }

    @Test func textFramesWrittenOneAfterAnotherArriveWholeThenTheClose() async throws {
        // Each text frame is written into the buffer the previous one left: none may carry another's bytes.
        let server = try await RawUpgradeServer.start(sending: Self.frame(0x81, Array("ready".utf8)))
        let client = try await SocketProbe.connect(to: server.port)
        #expect(await client.events(untilTexts: 1) == [.text("ready")])
        let texts = [String(repeating: "a", count: 125), "bb", String(repeating: "c", count: 60), ""]
        await client.send(texts)
        await client.close()
        let frames = await server.clientFrames(count: texts.count + 1)
        #expect(frames.map(\.opcode) == Array(repeating: 0x1, count: texts.count) + [0x8])
        #expect(frames.prefix(texts.count).map { String(decoding: $0.payload, as: UTF8.self) } == texts)
        #expect(frames.last?.payload == [0x03, 0xE8])  // 1000, a normal closure
        try await server.stop()
    }

    @Test func aMaskedFrameFromTheServerClosesTheConnectionWith1002() async throws {
        // A server never masks (RFC 6455 §5.1): the client must fail the connection.
        let masked: [UInt8] = [0x81, 0x82, 1, 2, 3, 4, UInt8(ascii: "h") ^ 1, UInt8(ascii: "i") ^ 2]
        try await Self.expectClose(after: masked, cause: "broke the WebSocket protocol", code: [0x03, 0xEA])  // 1002
    }

    @Test func aFrameOverTheLimitIsRefusedFromItsHeaderWith1009() async throws {
        // Only the header of a 5 MiB message is sent: the client must not wait for the rest.
        let header: [UInt8] = [0x81, 0x7F] + withUnsafeBytes(of: UInt64(5 << 20).bigEndian) { Array($0) }
        try await Self.expectClose(
            after: header, cause: "over \(ClientSocket.maxMessageBytes) bytes", code: [0x03, 0xF1])  // 1009
    }

    @Test func aFragmentedBinaryMessageIsDroppedAndTheNextTextRead() async throws {
        var after = Self.frame(0x02, [1, 2]) + Self.frame(0x00, [3]) + Self.frame(0x80, [4])
        after += Self.frame(0x82, [5]) + Self.frame(0x81, Array("text".utf8))
        let server = try await RawUpgradeServer.start(sending: after)
        let client = try await SocketProbe.connect(to: server.port)
        #expect(await client.events(untilTexts: 1) == [.text("text")])
        await client.close()
        try await server.stop()
    }

    /// RFC 6455 §5.4: fragments come in order, one message at a time.
    @Test(arguments: [
        // A continuation with no message begun.
        [0x80, 0x01, 0x61] as [UInt8],
        // A text message begun inside another.
        [0x01, 0x01, 0x61, 0x81, 0x01, 0x62],
    ])
    func fragmentsOutOfOrderCloseTheConnectionWith1002(after: [UInt8]) async throws {
        try await Self.expectClose(after: after, cause: "broke the WebSocket protocol", code: [0x03, 0xEA])  // 1002
    }

    /// A server that writes `after` behind its 101: the client closes before anything reaches its owner, says
    /// why (`cause`), and sends a close frame whose first two bytes are `code`.
    static func expectClose(after: [UInt8], cause expected: String, code: [UInt8]) async throws {
        let server = try await RawUpgradeServer.start(sending: after)
        let client = try await SocketProbe.connect(to: server.port)
        let heard = await client.events(untilTexts: 1)
        guard case .closed(let cause)? = heard.first, heard.count == 1 else {
            Issue.record("the connection did not close before delivering: \(heard)")
            return
        }
        #expect(cause.contains(expected))
        #expect(await server.clientFrame(opcode: 0x8)?.prefix(2) == code[...])
        try await server.stop()
    }

    /// An unmasked frame as a server writes it, with a one-byte length (the tests' payloads are short).
    static func frame(_ first: UInt8, _ payload: [UInt8]) -> [UInt8] {
        precondition(payload.count <= 125)
        return [first, UInt8(payload.count)] + payload
    }
}

/// A client socket and what its delegate heard, in order.
private final class SocketProbe: ClientSocketDelegate, @unchecked Sendable {
    // Touched on the socket's loop only.
    private var socket: ClientSocket?
    private let loop: any EventLoop
    private let events: AsyncStream<Event>
    private let heard: AsyncStream<Event>.Continuation

    enum Event: Equatable {
        case text(String)
        case closed(String)
    }

    private init(loop: any EventLoop) {
        self.loop = loop
        (events, heard) = AsyncStream.makeStream(of: Event.self)
    }

    static func connect(to port: Int) async throws -> SocketProbe {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let probe = SocketProbe(loop: loop)
        try await loop.submit {
            probe.socket = ClientSocket(
                id: 1, url: "ws://127.0.0.1:\(port)/v1/signal", loop: loop, delegate: probe,
                logger: Logger(label: "test"))
        }.get()
        return probe
    }

    func socketOpened(_ socket: Int) {}

    func received(utf8 text: UnsafeBufferPointer<UInt8>, socket: Int) {
        heard.yield(.text(String(decoding: text, as: UTF8.self)))
    }

    func socketClosed(_ socket: Int, cause: String) {
        heard.yield(.closed(cause))
        heard.finish()
    }

    /// What was heard until `count` texts arrived or the socket closed.
    func events(untilTexts count: Int) async -> [Event] {
        var seen: [Event] = []
        for await event in events {
            seen.append(event)
            if seen.count(where: { if case .text = $0 { true } else { false } }) == count { break }
        }
        return seen
    }

    func send(_ texts: [String]) async {
        try? await loop.submit { for text in texts { self.socket?.write(text) } }.get()
    }

    func close() async {
        try? await loop.submit { self.socket?.close() }.get()
    }
}

/// A TCP server that answers one WebSocket upgrade request by hand: the 101 (with the right accept key) and then
/// `sending`, in one write. It keeps the client's frames that follow, unmasked.
private final class RawUpgradeServer: Sendable {
    let port: Int
    private let channel: any Channel
    private let frames: AsyncStream<ClientFrame>

    struct ClientFrame: Sendable {
        var opcode: UInt8
        var payload: [UInt8]
    }

    private init(port: Int, channel: any Channel, frames: AsyncStream<ClientFrame>) {
        self.port = port
        self.channel = channel
        self.frames = frames
    }

    static func start(sending after: [UInt8]) async throws -> RawUpgradeServer {
        let (frames, received) = AsyncStream.makeStream(of: ClientFrame.self)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Connection(after: after, frames: received))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return RawUpgradeServer(port: channel.localAddress?.port ?? 0, channel: channel, frames: frames)
    }

    /// The payload of the first frame the client sent with `opcode`, once it arrived.
    func clientFrame(opcode: UInt8) async -> [UInt8]? {
        for await frame in frames where frame.opcode == opcode { return frame.payload }
        return nil
    }

    /// The next `count` frames the client sent (fewer if the connection ended first).
    func clientFrames(count: Int) async -> [ClientFrame] {
        var seen: [ClientFrame] = []
        for await frame in frames {
            seen.append(frame)
            if seen.count == count { break }
        }
        return seen
    }

    func stop() async throws {
        try await channel.close()
    }

    private final class Connection: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private let after: [UInt8]
        private let frames: AsyncStream<ClientFrame>.Continuation
        private var received = ByteBuffer()
        private var upgraded = false

        init(after: [UInt8], frames: AsyncStream<ClientFrame>.Continuation) {
            self.after = after
            self.frames = frames
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            received.writeBuffer(&bytes)
            if !upgraded {
                let text = String(decoding: received.readableBytesView, as: UTF8.self)
                guard let end = text.range(of: "\r\n\r\n") else { return }
                let key =
                    text.split(separator: "\r\n")
                    .first { $0.lowercased().hasPrefix("sec-websocket-key:") }
                    .map { $0.dropFirst("sec-websocket-key:".count).trimmingCharacters(in: .whitespaces) } ?? ""
                let accept = Data(Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
                    .base64EncodedString()
                var response = context.channel.allocator.buffer(capacity: 256 + after.count)
                response.writeString(
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Accept: \(accept)\r\n\r\n")
                response.writeBytes(after)
                context.writeAndFlush(wrapOutboundOut(response), promise: nil)
                upgraded = true
                received.moveReaderIndex(forwardBy: text[..<end.upperBound].utf8.count)
            }
            readClientFrames()
        }

        func channelInactive(context: ChannelHandlerContext) {
            frames.finish()
            context.fireChannelInactive()
        }

        /// The client's frames are masked, with short payloads here.
        private func readClientFrames() {
            while received.readableBytes >= 6,
                let first = received.getInteger(at: received.readerIndex, as: UInt8.self),
                let second = received.getInteger(at: received.readerIndex + 1, as: UInt8.self),
                second & 0x7F <= 125, received.readableBytes >= 6 + Int(second & 0x7F)
            {
                received.moveReaderIndex(forwardBy: 2)
                let key = received.readBytes(length: 4) ?? []
                let payload = (received.readBytes(length: Int(second & 0x7F)) ?? []).enumerated()
                    .map { $0.element ^ key[$0.offset % 4] }
                frames.yield(ClientFrame(opcode: first & 0x0F, payload: payload))
            }
        }
    }
}
