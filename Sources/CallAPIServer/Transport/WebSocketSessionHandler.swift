import NIOCore
import NIOWebSocket

/// The last handler of an upgraded WebSocket connection, for both endpoints: reassembles messages within the size
/// limit, checks text is UTF-8, answers pings and closes, and hands each message to its ``SessionEndpoint`` on
/// the event loop that read it (no task, no stream, no actor hop between the socket and the endpoint's state).
///
/// Closes follow RFC 6455: 1009 for a message over the limit, 1007 for text that is not UTF-8, 1002 for a
/// protocol error, the client's own code echoed when it closes first.
final class WebSocketSessionHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame

    /// How long a close frame we sent waits for the client's answer before the socket is closed anyway.
    static let closeTimeout: TimeAmount = .seconds(2)

    private let endpoint: any SessionEndpoint
    private let writer: ChannelHandlerContext
    private let flusher: LoopFlusher
    private var connection: WebSocketConnection?
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

    /// `writer` is the ``RawFrameWriter``'s context, through which the connection writes encoded frames.
    init(endpoint: any SessionEndpoint, writer: ChannelHandlerContext, flusher: LoopFlusher) {
        self.endpoint = endpoint
        self.writer = writer
        self.flusher = flusher
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let connection = endpoint.open(channel: context.channel, flusher: flusher)
        connection.attach(writer)
        self.connection = connection
        flusher.register(self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        ended()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        ended()
        context.fireChannelInactive()
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
        let frame = unwrapInboundIn(data)
        active = true
        switch frame.opcode {
        case .text, .binary:
            guard fragments == nil else { return fail(code: 1002, reason: "data frame inside a fragmented message") }
            if frame.fin {
                deliver(frame.unmaskedData, isText: frame.opcode == .text, context: context)
            } else {
                fragmentsAreText = frame.opcode == .text
                fragments = frame.unmaskedData
            }
        case .continuation:
            guard var buffer = fragments else { return fail(code: 1002, reason: "continuation without a message") }
            fragments = nil
            var data = frame.unmaskedData
            guard buffer.readableBytes + data.readableBytes <= endpoint.maxMessageBytes else {
                return fail(code: 1009, reason: "message too large")
            }
            buffer.writeBuffer(&data)
            if frame.fin {
                deliver(buffer, isText: fragmentsAreText, context: context)
            } else {
                fragments = buffer
            }
        case .ping:
            connection?.sendControl(opcode: WebSocketServerFrame.pongOpcode, payload: frame.unmaskedData)
        case .pong:
            awaitingPong = false
        case .connectionClose:
            closeReceived = true
            if closeSent {
                context.close(promise: nil)
            } else {
                // Echo the client's code (RFC 6455 §5.5.1); the socket closes once the answer is written.
                var data = frame.unmaskedData
                let code = data.readInteger(as: UInt16.self) ?? 1000
                connection?.close(code: code, reason: nil)
            }
        default:
            fail(code: 1002, reason: "unknown opcode")
        }
    }

    private func deliver(_ payload: ByteBuffer, isText: Bool, context: ChannelHandlerContext) {
        guard !ignoring, !closeSent, let connection else { return }
        guard payload.readableBytes <= endpoint.maxMessageBytes else {
            return fail(code: 1009, reason: "message too large")
        }
        guard isText else {
            endpoint.receivedBinary(on: connection.id)
            return
        }
        guard let text = String(validating: payload.readableBytesView, as: UTF8.self) else {
            return fail(code: 1007, reason: "text is not UTF-8")
        }
        if !endpoint.received(text: text, on: connection.id, at: .now) {
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
        // After a decoding error, every read reports it again: the close under way handles it.
        if error is ByteToMessageDecoderError { return }
        switch error as? NIOWebSocketError {
        case .invalidFrameLength: fail(code: 1009, reason: "message too large")
        case .some: fail(code: 1002, reason: "protocol error")
        case nil: context.close(promise: nil)
        }
    }

    /// Closes with `code` after what is queued, and reads no further.
    private func fail(code: UInt16, reason: String) {
        ignoring = true
        fragments = nil
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
        connection.sendControl(opcode: WebSocketServerFrame.pingOpcode, payload: ByteBuffer())
    }
}
