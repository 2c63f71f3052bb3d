import CallAPIServerCore
import CallAPISignalProtocol
import NIOCore

/// The one handler of an upgraded WebSocket connection, for both endpoints: reads the client's frames from the
/// socket's bytes (``WebSocketClientFrame``), reassembles messages within the size limit, checks text is UTF-8,
/// answers pings and closes, and hands each message to its ``SessionEndpoint`` on the event loop that read it (no
/// task, no stream, no actor hop between the socket and the endpoint's state). What the endpoint sends is written
/// through this handler's context by the ``WebSocketConnection``, already encoded.
///
/// Closes follow RFC 6455: 1009 for a message over the limit, 1007 for text that is not UTF-8, 1002 for a
/// protocol error (an unmasked frame among them), the client's own code echoed when it closes first.
final class WebSocketSessionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// How long a close frame we sent waits for the client's answer before the socket is closed anyway.
    static let closeTimeout: TimeAmount = .seconds(2)

    private let endpoint: any SessionEndpoint
    private let flusher: LoopFlusher
    private var connection: WebSocketConnection?
    /// The start of a frame whose end has not arrived yet, in a buffer of its own (never the socket's read buffer).
    private var unread: ByteBuffer?
    /// The message being reassembled from fragments, and whether it is text.
    private var fragments: ByteBuffer?
    private var fragmentsAreText = false
    /// The endpoint closed the session: what the client still sends is not read.
    private var ignoring = false
    private var closeReceived = false
    private var closeSent = false
    private var closeDeadline: Scheduled<Void>?
    /// Whether anything arrived since the last ping, and whether that ping is unanswered.
    private var active = true
    private var awaitingPong = false
    private var context: ChannelHandlerContext?

    init(endpoint: any SessionEndpoint, flusher: LoopFlusher) {
        self.endpoint = endpoint
        self.flusher = flusher
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // It fails only on a channel already closed, which is written to no more.
        try? context.channel.syncOptions?.setOption(
            ChannelOptions.writeBufferWaterMark, value: WebSocketConnection.writeBufferWaterMark)
        let connection = endpoint.open(channel: context.channel, flusher: flusher)
        connection.attach(context)
        self.connection = connection
        flusher.register(self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        flusher.readsCompleted()
        ended()
        self.context = nil
    }

    /// Not passed on: under ``WebSocketConnection/writeBufferWaterMark`` every write turns the channel unwritable
    /// and back, and no handler after this one acts on it.
    func channelWritabilityChanged(context: ChannelHandlerContext) {}

    func channelInactive(context: ChannelHandlerContext) {
        flusher.readsCompleted()
        ended()
        context.fireChannelInactive()
    }

    /// What this connection's reads queued, to any connection on the loop, is written now (``LoopFlusher``).
    func channelReadComplete(context: ChannelHandlerContext) {
        flusher.readsCompleted()
        context.fireChannelReadComplete()
    }

    private func ended() {
        closeDeadline?.cancel()
        closeDeadline = nil
        guard let connection else { return }
        self.connection = nil
        connection.detach()
        flusher.unregister(self)
        endpoint.closed(connection.id)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !ignoring else { return }
        flusher.readsBegan()
        active = true
        var bytes = unwrapInboundIn(data)
        var ownsBytes = false
        if var kept = unread {
            unread = nil
            kept.writeBuffer(&bytes)
            bytes = kept
            ownsBytes = true
        }
        while !ignoring {
            switch WebSocketClientFrame.read(from: &bytes, maxPayloadBytes: endpoint.maxMessageBytes) {
            case .frame(let frame):
                received(frame, context: context)
            case .incomplete:
                guard bytes.readableBytes > 0 else { return }
                if ownsBytes {
                    bytes.discardReadBytes()
                    unread = bytes
                } else {
                    // Copied, so that an idle connection does not keep the socket's read buffer.
                    var kept = context.channel.allocator.buffer(capacity: bytes.readableBytes)
                    kept.writeBuffer(&bytes)
                    unread = kept
                }
                return
            case .refused(let refusal):
                return fail(code: refusal.closeCode, reason: refusal.reason)
            }
        }
    }

    private func received(_ frame: WebSocketClientFrame, context: ChannelHandlerContext) {
        switch frame.opcode {
        case FrameOpcode.text, FrameOpcode.binary:
            guard fragments == nil else { return fail(code: 1002, reason: "data frame inside a fragmented message") }
            if frame.fin {
                deliver(frame, isText: frame.opcode == FrameOpcode.text)
            } else {
                fragmentsAreText = frame.opcode == FrameOpcode.text
                fragments = frame.unmasked(allocator: context.channel.allocator)
            }
        case FrameOpcode.continuation:
            guard var buffer = fragments else { return fail(code: 1002, reason: "continuation without a message") }
            fragments = nil
            guard buffer.readableBytes + frame.payload.readableBytes <= endpoint.maxMessageBytes else {
                return fail(code: 1009, reason: "message too large")
            }
            frame.appendUnmasked(to: &buffer)
            if frame.fin {
                deliver(buffer.readableBytesView, isText: fragmentsAreText)
            } else {
                fragments = buffer
            }
        case FrameOpcode.ping:
            connection?.sendControl(
                opcode: FrameOpcode.pong, payload: frame.unmasked(allocator: context.channel.allocator))
        case FrameOpcode.pong:
            awaitingPong = false
        default:  // close: the reader lets no other opcode through
            closeReceived = true
            if closeSent {
                context.close(promise: nil)
            } else {
                // Echo the client's code (RFC 6455 §5.5.1); the socket closes once the answer is written.
                var data = frame.unmasked(allocator: context.channel.allocator)
                let code = data.readInteger(as: UInt16.self) ?? 1000
                connection?.close(code: code, reason: nil)
            }
        }
    }

    /// A whole message in one frame: unmasked straight into the text handed on (on the stack when it is small).
    private func deliver(_ frame: WebSocketClientFrame, isText: Bool) {
        guard isText else { return deliver(frame.payload.readableBytesView, isText: false) }
        withUnsafeTemporaryAllocation(byteCount: frame.payload.readableBytes, alignment: 8) { scratch in
            frame.unmask(into: scratch)
            let utf8 = UnsafeRawBufferPointer(scratch).assumingMemoryBound(to: UInt8.self)
            guard UTF8Text.isASCII(utf8) else { return deliver(utf8, isText: true) }
            // Checked already: ASCII is UTF-8.
            deliver(utf8: utf8)
        }
    }

    private func deliver(_ payload: some Collection<UInt8>, isText: Bool) {
        // Within the size limit already: a frame's length is checked from its header, fragments as they add up.
        guard !ignoring, !closeSent, let connection else { return }
        guard isText else {
            endpoint.receivedBinary(on: connection.id)
            return
        }
        guard var text = String(validating: payload, as: UTF8.self) else {
            return fail(code: 1007, reason: "text is not UTF-8")
        }
        text.withUTF8 { deliver(utf8: $0) }
    }

    /// Text checked as UTF-8, to the endpoint.
    private func deliver(utf8 text: UnsafeBufferPointer<UInt8>) {
        guard !ignoring, !closeSent, let connection else { return }
        if !endpoint.received(utf8: text, on: connection.id, at: .now()) {
            ignoring = true
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // Connections allow half closure (for HTTP): a client that shuts its side down has gone.
        if let event = event as? NIOCore.ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A failed read completes no reads: what they queued is written before the socket closes.
        flusher.readsCompleted()
        context.close(promise: nil)
    }

    /// Closes with `code` after what is queued, and reads no further.
    private func fail(code: UInt16, reason: String?) {
        ignoring = true
        fragments = nil
        unread = nil
        // The socket closes when the client answers, or after the close timeout: closing it at once, with the
        // client's data still unread, would reset the connection and lose the close frame on the way.
        guard let connection else { return }
        connection.close(code: code, reason: reason)
    }

    /// Our close frame was written (or its write failed).
    static func closeSent(on channel: any Channel) {
        guard let handler = try? channel.pipeline.syncOperations.handler(type: WebSocketSessionHandler.self) else {
            channel.close(promise: nil)
            return
        }
        handler.closeWasSent()
    }

    private func closeWasSent() {
        closeSent = true
        guard let context else { return }
        if closeReceived {
            context.close(promise: nil)
        } else {
            let channel = context.channel
            closeDeadline = context.eventLoop.scheduleTask(in: Self.closeTimeout) { channel.close(promise: nil) }
        }
    }

    /// Called by the loop's ping sweep (every ``LoopFlusher/pingInterval``, docs/protocol.md "Liveness"): pings
    /// the connection, or closes it if it neither answered the last ping nor sent anything since.
    func sweep() {
        guard let connection, !closeSent else { return }
        if awaitingPong, !active {
            context?.close(promise: nil)
            return
        }
        awaitingPong = true
        active = false
        connection.sendControl(opcode: FrameOpcode.ping, payload: ByteBuffer())
    }
}
