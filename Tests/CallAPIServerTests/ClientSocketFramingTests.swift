import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import CallAPISignalClient

/// The client's socket reads frames itself (``ServerFrameReader``), so what NIO used to do for it is checked over a
/// real socket against a raw server that writes exactly the bytes each test needs.
@Suite struct ClientSocketFramingTests {
    @Test func framesInTheSameWriteAsTheUpgradeResponseAreRead() async throws {
        // The 101, a ping and two text messages (one in two fragments) leave in one write, so they are read together.
        var after = Self.frame(0x89, Array("hi".utf8))
        after += Self.frame(0x81, Array("first".utf8))
        after += Self.frame(0x01, Array("sec".utf8)) + Self.frame(0x80, Array("ond".utf8))
        let server = try await RawUpgradeServer.start(sending: after)
        let client = try await SocketProbe.connect(to: server.port)
        #expect(try await client.texts(count: 2) == ["first", "second"])
        // The ping was answered: the server read a masked pong carrying "hi".
        let pong = try await server.clientFrame(opcode: 0xA)
        #expect(pong == Array("hi".utf8))
        await client.close()
        try await server.stop()
    }

    @Test func aMaskedFrameFromTheServerClosesTheConnectionWith1002() async throws {
        // A server never masks (RFC 6455 §5.1): the client must fail the connection.
        let masked: [UInt8] = [0x81, 0x82, 1, 2, 3, 4, UInt8(ascii: "h") ^ 1, UInt8(ascii: "i") ^ 2]
        let server = try await RawUpgradeServer.start(sending: masked)
        let client = try await SocketProbe.connect(to: server.port)
        let cause = try await client.closedCause()
        #expect(cause.contains("broke the WebSocket protocol"))
        #expect(client.receivedTexts.isEmpty)
        let close = try await server.clientFrame(opcode: 0x8)
        #expect(close.prefix(2) == [0x03, 0xEA])  // 1002
        try await server.stop()
    }

    @Test func aFrameOverTheLimitIsRefusedFromItsHeaderWith1009() async throws {
        // Only the header of a 5 MiB message is sent: the client must not wait for the rest.
        let header: [UInt8] = [0x81, 0x7F] + withUnsafeBytes(of: UInt64(5 << 20).bigEndian) { Array($0) }
        let server = try await RawUpgradeServer.start(sending: header)
        let client = try await SocketProbe.connect(to: server.port)
        #expect(try await client.closedCause().contains("over \(ClientSocket.maxMessageBytes) bytes"))
        let close = try await server.clientFrame(opcode: 0x8)
        #expect(close.prefix(2) == [0x03, 0xF1])  // 1009
        try await server.stop()
    }

    /// An unmasked frame as a server writes it, with a one-byte length (the tests' payloads are short).
    static func frame(_ first: UInt8, _ payload: [UInt8]) -> [UInt8] {
        precondition(payload.count <= 125)
        return [first, UInt8(payload.count)] + payload
    }
}

/// A client socket and what its delegate heard, read from the test.
private final class SocketProbe: ClientSocketDelegate, @unchecked Sendable {
    // Touched on the socket's loop only, except through `events`.
    private var socket: ClientSocket?
    private let loop: any EventLoop
    private let events = NIOLockedValueBox(Events())

    private struct Events {
        var texts: [String] = []
        var closed: String?
    }

    private init(loop: any EventLoop) {
        self.loop = loop
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
        let text = String(decoding: text, as: UTF8.self)
        events.withLockedValue { $0.texts.append(text) }
    }

    func socketClosed(_ socket: Int, cause: String) {
        events.withLockedValue { $0.closed = cause }
    }

    /// Every text received so far.
    var receivedTexts: [String] { events.withLockedValue { $0.texts } }

    /// The first `count` texts, once that many arrived (10 s at most).
    func texts(count: Int) async throws -> [String] {
        try await wait { $0.texts.count >= count ? Array($0.texts.prefix(count)) : nil }
    }

    /// Why the socket closed, once it did (10 s at most).
    func closedCause() async throws -> String {
        try await wait { $0.closed }
    }

    func close() async {
        try? await loop.submit { self.socket?.close() }.get()
    }

    private func wait<Value: Sendable>(_ read: @escaping @Sendable (Events) -> Value?) async throws -> Value {
        try await RawUpgradeServer.poll { self.events.withLockedValue { read($0) } }
    }
}

/// A TCP server that answers one WebSocket upgrade request by hand: the 101 (with the right accept key) and then
/// `sending`, in one write. It keeps the client's frames that follow, unmasked.
private final class RawUpgradeServer: Sendable {
    let port: Int
    private let channel: any Channel
    private let frames: NIOLockedValueBox<[(opcode: UInt8, payload: [UInt8])]>

    private init(port: Int, channel: any Channel, frames: NIOLockedValueBox<[(opcode: UInt8, payload: [UInt8])]>) {
        self.port = port
        self.channel = channel
        self.frames = frames
    }

    static func start(sending after: [UInt8]) async throws -> RawUpgradeServer {
        let frames = NIOLockedValueBox<[(opcode: UInt8, payload: [UInt8])]>([])
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Connection(after: after, frames: frames))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return RawUpgradeServer(port: channel.localAddress?.port ?? 0, channel: channel, frames: frames)
    }

    /// The payload of the first frame the client sent with `opcode`, once it arrived (10 s at most).
    func clientFrame(opcode: UInt8) async throws -> [UInt8] {
        try await Self.poll { self.frames.withLockedValue { $0.first { $0.opcode == opcode }?.payload } }
    }

    func stop() async throws {
        try await channel.close()
    }

    /// Checks `read` every 10 ms of real time until it answers; fails after 10 s.
    static func poll<Value>(_ read: () -> Value?) async throws -> Value {
        for _ in 0..<1_000 {
            if let value = read() { return value }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw CancellationError()
    }

    private final class Connection: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private let after: [UInt8]
        private let frames: NIOLockedValueBox<[(opcode: UInt8, payload: [UInt8])]>
        private var received = ByteBuffer()
        private var upgraded = false

        init(after: [UInt8], frames: NIOLockedValueBox<[(opcode: UInt8, payload: [UInt8])]>) {
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
                frames.withLockedValue { $0.append((first & 0x0F, payload)) }
            }
        }
    }
}
