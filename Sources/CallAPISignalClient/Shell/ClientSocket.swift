import CallAPISignalProtocol
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// What a ``ClientSocket`` reports to: the signaling client's core, or an RTC channel connection's. Called on the
/// socket's event loop, which is the delegate's own loop: a received frame reaches it with no thread hop.
protocol ClientSocketDelegate: AnyObject {
    func socketOpened(_ socket: Int)
    /// A whole text message, as the bytes that came off the socket (not yet checked as UTF-8); valid only
    /// during the call.
    func received(utf8 text: UnsafeBufferPointer<UInt8>, socket: Int)
    func socketClosed(_ socket: Int, cause: String)
}

/// One WebSocket connection to the server, on SwiftNIO's pipeline directly: frames are read and written on the
/// owner's event loop, without a task or an async sequence between the socket and the owner (docs/architecture.md,
/// "The client's data path"). Confined to that loop.
final class ClientSocket {
    let id: Int
    private let loop: any EventLoop
    private let logger: Logger
    fileprivate var phase: Phase = .connecting(closeWhenOpen: false)
    /// Where the masking keys of text frames come from (one system call per 32 frames, not one per frame).
    private var entropy = BufferedEntropy()

    fileprivate enum Phase {
        /// Connecting and upgrading; `closeWhenOpen` when the owner closed it meanwhile.
        case connecting(closeWhenOpen: Bool)
        /// Upgraded: frames are written through the handler that reads them.
        case open(any Channel, FrameHandler)
        /// A close frame is sent; the server's answer (or a second's wait) closes the channel.
        case closing(any Channel)
        case closed
    }

    /// The largest message read (as the server's limit for what it sends: 4 MiB).
    static let maxMessageBytes = 1 << 22

    /// The buffer the last text frame was written from, kept for the next: once NIO has written it, this is its
    /// only reference and clearing it keeps its memory (a new buffer per frame was two allocations and two frees;
    /// docs/benchmarks.md). Kept up to ``keptBufferBytes``; when NIO still holds it (the socket could not take it
    /// all), clearing allocates anew.
    private var frameBuffer: ByteBuffer?
    static let keptBufferBytes = 8192

    /// Opens a socket to `url`; a `wss://` server's certificate chain must lead to `trustedCertificatesPEM` when
    /// given, else to the system's roots.
    init(
        id: Int, url: String, trustedCertificatesPEM: String? = nil, loop: any EventLoop,
        delegate: any ClientSocketDelegate, logger: Logger
    ) {
        loop.preconditionInEventLoop()
        self.id = id
        self.loop = loop
        self.logger = logger
        let owner = NIOLoopBound(Owner(socket: self, delegate: delegate), eventLoop: loop)
        guard let target = WebSocketTarget(url) else {
            phase = .closed
            let cause = "the server address \(url) is not a ws:// or wss:// URL"
            loop.execute { owner.value.closed(cause: cause) }
            return
        }
        let tls: NIOSSLContext?
        do {
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let trustedCertificatesPEM {
                configuration.trustRoots = .certificates(
                    try NIOSSLCertificate.fromPEMBytes(Array(trustedCertificatesPEM.utf8)))
            }
            tls = target.secure ? try NIOSSLContext(configuration: configuration) : nil
        } catch {
            phase = .closed
            loop.execute { owner.value.closed(cause: "TLS could not be set up: \(error)") }
            return
        }
        let connect = ClientBootstrap(group: loop)
            .connectTimeout(.seconds(10))
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try Self.configure(channel, target: target, tls: tls, owner: owner)
                }
            }
            .connect(host: target.host, port: target.port)
        connect.whenComplete { result in
            switch result {
            case .success(let channel):
                channel.closeFuture.whenComplete { _ in owner.value.closed(cause: nil) }
            case .failure(let error):
                owner.value.closed(cause: "could not connect to \(target.host):\(target.port): \(error)")
            }
        }
    }

    /// TLS (for wss), the HTTP upgrade request, and once upgraded the frame handler.
    private static func configure(
        _ channel: any Channel, target: WebSocketTarget, tls: NIOSSLContext?, owner: NIOLoopBound<Owner>
    ) throws {
        let sync = channel.pipeline.syncOperations
        if let tls {
            try sync.addHandler(NIOSSLClientHandler(context: tls, serverHostname: target.serverName))
        }
        let request = UpgradeRequestHandler(target: target, owner: owner)
        let upgrader = WebSocketUpgrader { channel in
            try channel.pipeline.syncOperations.addHandler(FrameHandler(owner: owner))
        }
        try sync.addHTTPClientHandlers(
            // Frames the server writes right after its 101 can arrive in the same read as the 101: NIO's default
            // drops them.
            leftOverBytesStrategy: .forwardBytes,
            withClientUpgrade: (
                upgraders: [upgrader],
                completionHandler: { context in
                    context.pipeline.removeHandler(name: UpgradeRequestHandler.name, promise: nil)
                }
            ))
        try sync.addHandler(request, name: UpgradeRequestHandler.name)
    }

    /// Writes one text message (masked, as every client frame must be).
    func write(_ text: String) {
        var text = text
        text.withUTF8 { writeText(copying: UnsafeRawBufferPointer($0)) }
    }

    /// Writes one frame: the frames sent at high rates straight into the socket's buffer, the others encoded first.
    func write(_ frame: ClientFrame) {
        guard let bound = FrameCoding.lengthBound(frame) else {
            return FrameCoding.encodeUTF8(frame).withUnsafeBytes { writeText(copying: $0) }
        }
        writeText(atMost: bound) { FrameCoding.write(frame, into: $0) }
    }

    private func writeText(copying utf8: UnsafeRawBufferPointer) {
        writeText(atMost: utf8.count) { memory in
            memory.copyMemory(from: utf8)
            return utf8.count
        }
    }

    /// Writes a text frame of at most `bound` bytes, which `text` writes and whose length it gives.
    private func writeText(atMost bound: Int, text: (UnsafeMutableRawBufferPointer) -> Int) {
        guard case .open(let channel, let handler) = phase else {
            // The machines write only after `socketOpened` and before `closeSocket`; a write outside that is a bug.
            logger.warning("a frame written to a socket that is not open was not sent", metadata: ["socket": "\(id)"])
            return
        }
        let room = bound + WebSocketFrameHeader.maxSize
        var frame = frameBuffer.take() ?? channel.allocator.buffer(capacity: room)
        frame.clear(minimumCapacity: room)
        MaskedFrame.writeText(atMost: bound, key: .random(using: &entropy), into: &frame, text: text)
        handler.writeAndFlush(frame)
        if frame.capacity <= Self.keptBufferBytes { frameBuffer = consume frame }
    }

    /// Closes politely, and forcibly if the server does not answer within a second.
    func close() {
        switch phase {
        case .connecting:
            phase = .connecting(closeWhenOpen: true)
        case .open(let channel, let handler):
            phase = .closing(channel)
            frameBuffer = nil
            handler.writeClose(code: .normalClosure, promise: nil)
            channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        case .closing, .closed:
            break
        }
    }

    /// Drops the connection at once (it is considered dead).
    func abort() {
        switch phase {
        case .connecting:
            phase = .connecting(closeWhenOpen: true)
        case .open(let channel, _), .closing(let channel):
            phase = .closed
            frameBuffer = nil
            channel.close(promise: nil)
        case .closed:
            break
        }
    }

    /// The socket and its delegate as its handlers see them, with what they learned about the end: reported once.
    final class Owner {
        let socket: ClientSocket
        weak var delegate: (any ClientSocketDelegate)?
        /// Why the connection ended, when a handler knew before the channel closed.
        var cause: String?
        private var reportedClosed = false

        init(socket: ClientSocket, delegate: any ClientSocketDelegate) {
            self.socket = socket
            self.delegate = delegate
        }

        /// The upgrade is done: `handler` reads the connection's frames and writes the socket's.
        fileprivate func opened(_ channel: any Channel, handler: FrameHandler) {
            if case .connecting(closeWhenOpen: true) = socket.phase {
                socket.phase = .open(channel, handler)
                socket.close()
                return
            }
            socket.phase = .open(channel, handler)
            delegate?.socketOpened(socket.id)
        }

        func closed(cause: String?) {
            guard !reportedClosed else { return }
            reportedClosed = true
            socket.phase = .closed
            delegate?.socketClosed(socket.id, cause: self.cause ?? cause ?? "the connection closed")
        }
    }
}

/// Sends the HTTP request that asks for the WebSocket upgrade; a response that reaches it was a refusal.
private final class UpgradeRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart
    static let name = "callapi.upgrade-request"

    private let target: WebSocketTarget
    private let owner: NIOLoopBound<ClientSocket.Owner>

    init(target: WebSocketTarget, owner: NIOLoopBound<ClientSocket.Owner>) {
        self.target = target
        self.owner = owner
    }

    func channelActive(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: target.hostHeader)
        headers.add(name: "Content-Length", value: "0")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.pathAndQuery, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let response) = unwrapInboundIn(data) {
            owner.value.cause = "the server refused the WebSocket upgrade: HTTP \(response.status.code)"
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        owner.value.cause = owner.value.cause ?? "\(error)"
        context.close(promise: nil)
    }
}

/// The upgraded connection: reads the server's frames from the socket's bytes (``ServerFrameReader``), hands text
/// messages (reassembled) to the owner, answers pings, does the close handshake, and writes the socket's frames
/// (``MaskedFrame``). The only handler the upgrade adds: no outbound handler sits between it and the socket (or
/// TLS), so neither its writes nor the channel's read requests pass through one.
///
/// It is added while NIO's upgrade handler is still in the pipeline, which passes on the bytes the handler it
/// adds writes at once (the login) and is removed before anything else runs on the loop.
fileprivate final class FrameHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let owner: NIOLoopBound<ClientSocket.Owner>
    private let reader = ServerFrameReader(maxPayload: ClientSocket.maxMessageBytes)
    private var reading = Reading.frames(partial: nil, message: nil)

    private enum Reading {
        /// Reading frames. `partial`: the start of a frame whose other bytes have not arrived; `message`: a
        /// fragmented message whose last frame has not come.
        case frames(partial: ByteBuffer?, message: Fragmented?)
        /// The connection failed or closed: nothing more is read.
        case stopped
    }

    private enum Fragmented {
        /// A text message, reassembled as its frames come.
        case text(ByteBuffer)
        /// A binary message: not for this client, its frames are dropped.
        case binary
    }

    init(owner: NIOLoopBound<ClientSocket.Owner>) {
        self.owner = owner
    }

    /// Set while the handler is in the pipeline.
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        owner.value.opened(context.channel, handler: self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Writes `frame` (a whole WebSocket frame, masked) and flushes.
    func writeAndFlush(_ frame: ByteBuffer) {
        context?.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }

    /// Writes a close frame with `code` and flushes; `promise` completes once it is on the socket.
    func writeClose(code: WebSocketErrorCode?, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        var payload = context.channel.allocator.buffer(capacity: 2)
        if let code { payload.write(webSocketErrorCode: code) }
        writeControl(FrameOpcode.close, payload: payload, context: context, promise: promise)
    }

    private func writeControl(
        _ opcode: UInt8, payload: ByteBuffer, context: ChannelHandlerContext, promise: EventLoopPromise<Void>?
    ) {
        var frame = context.channel.allocator.buffer(capacity: WebSocketFrameHeader.maxSize + payload.readableBytes)
        // Control frames are rare (a pong per server ping, the close): a key of their own from the system.
        MaskedFrame.writeControl(opcode: opcode, payload: payload, key: .random(), into: &frame)
        context.writeAndFlush(wrapOutboundOut(frame), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        switch reading {
        case .stopped:
            return
        case .frames(partial: var partial?, let message):
            reading = .frames(partial: nil, message: message)
            partial.writeBuffer(&bytes)
            bytes = partial
        case .frames(partial: nil, _):
            break
        }
        do {
            while let frame = try reader.next(from: &bytes) {
                handle(frame, context: context)
                // The owner may have closed the connection meanwhile.
                guard case .frames = reading else { return }
            }
        } catch {
            return fail(context, error)
        }
        if bytes.readableBytes > 0, case .frames(_, let message) = reading {
            reading = .frames(partial: bytes, message: message)
        }
    }

    private func handle(_ frame: ServerFrameReader.Frame, context: ChannelHandlerContext) {
        switch frame.opcode {
        case FrameOpcode.text, FrameOpcode.binary:
            // RFC 6455 §5.4: a message's fragments are not interleaved with another message's.
            guard case .frames(_, nil) = reading else { return fail(context, .messageInterrupted) }
            if !frame.fin {
                reading = .frames(
                    partial: nil, message: frame.opcode == FrameOpcode.text ? .text(frame.payload) : .binary)
            } else if frame.opcode == FrameOpcode.text {
                deliver(frame.payload, context: context)
            }  // A whole binary message is not for this client: dropped.
        case FrameOpcode.continuation:
            guard case .frames(let partial, let fragmented?) = reading else {
                return fail(context, .continuationWithoutMessage)
            }
            guard case .text(var message) = fragmented else {
                if frame.fin { reading = .frames(partial: partial, message: nil) }
                return
            }
            // Released first, so the append does not copy the message.
            reading = .frames(partial: partial, message: nil)
            var part = frame.payload
            guard message.readableBytes + part.readableBytes <= ClientSocket.maxMessageBytes else {
                return fail(context, .messageTooLarge(message.readableBytes + part.readableBytes))
            }
            message.writeBuffer(&part)
            if frame.fin {
                deliver(message, context: context)
            } else {
                reading = .frames(partial: partial, message: .text(message))
            }
        case FrameOpcode.ping:
            writeControl(FrameOpcode.pong, payload: frame.payload, context: context, promise: nil)
        case FrameOpcode.close:
            reading = .stopped
            var data = frame.payload
            let code = data.readWebSocketErrorCode()
            let reason = data.readString(length: data.readableBytes) ?? ""
            let owner = owner.value
            if case .closing = owner.socket.phase {
                // The answer to this side's close.
                context.close(promise: nil)
                return
            }
            owner.cause =
                "the server closed the connection (\(reason.isEmpty ? code.map { "\($0)" } ?? "no code" : reason))"
            // Answer the close, then close the TCP connection.
            let channel = context.channel
            let written = channel.eventLoop.makePromise(of: Void.self)
            writeClose(code: code, promise: written)
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
        default:
            break  // A pong; no other opcode gets past the header reader.
        }
    }

    private func deliver(_ data: ByteBuffer, context: ChannelHandlerContext) {
        let owner = owner.value
        guard let delegate = owner.delegate else { return }
        // Lent in place: the delegate reads the frame from the bytes, with no `String` made of the whole message.
        data.withUnsafeReadableBytes { bytes in
            delegate.received(utf8: bytes.assumingMemoryBound(to: UInt8.self), socket: owner.socket.id)
        }
    }

    /// Closes with the code the RFC gives for what was wrong: 1009 for a message too large, 1002 otherwise.
    private func fail(_ context: ChannelHandlerContext, _ failure: ServerFrameReader.Failure) {
        reading = .stopped
        let code = WebSocketErrorCode(codeNumber: Int(failure.closeCode))
        switch failure {
        case .refused(.tooLarge(let bytes)):
            owner.value.cause =
                "a message from the server is over \(ClientSocket.maxMessageBytes) bytes (\(bytes) bytes)"
        case .messageTooLarge(let bytes):
            owner.value.cause =
                "a message from the server is over \(ClientSocket.maxMessageBytes) bytes (\(bytes) bytes so far)"
        default:
            owner.value.cause = "the server broke the WebSocket protocol: \(failure)"
        }
        let channel = context.channel
        let written = channel.eventLoop.makePromise(of: Void.self)
        writeClose(code: code, promise: written)
        written.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        reading = .stopped
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        reading = .stopped
        owner.value.cause = owner.value.cause ?? "\(error)"
        context.close(promise: nil)
    }
}
