import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The first handler of every connection (after TLS): times out and caps connections that have not finished
/// their HTTP request head (slowloris), then leaves the pipeline. (A WebSocket's frames are checked where they
/// are read, by ``WebSocketSessionHandler``.)
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    /// Connections still sending their request head, shared by all connections of a server.
    final class PendingCount: Sendable {
        private let count = NIOLockedValueBox(0)
        /// Counts one more, unless `limit` are pending already.
        func enter(limit: Int) -> Bool {
            count.withLockedValue { count in
                guard count < limit else { return false }
                count += 1
                return true
            }
        }
        func leave() { count.withLockedValue { $0 -= 1 } }
        var value: Int { count.withLockedValue { $0 } }
    }

    private enum Phase {
        case head(RequestHeadScan)
        case done
    }

    private let pending: PendingCount
    private let maxPending: Int
    private let headTimeout: TimeAmount
    private let logger: Logger
    private var phase: Phase = .head(RequestHeadScan())
    private var counted = false
    private var deadline: Scheduled<Void>?

    init(pending: PendingCount, maxPending: Int, headTimeout: TimeAmount, logger: Logger) {
        self.pending = pending
        self.maxPending = maxPending
        self.headTimeout = headTimeout
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard pending.enter(limit: maxPending) else {
            logger.warning("connection refused: too many connections have not sent their request yet")
            phase = .done
            context.close(promise: nil)
            return
        }
        counted = true
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: headTimeout) { [logger] in
            logger.notice("connection closed: no complete request head in time")
            channel.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        headEnded()
    }

    func channelInactive(context: ChannelHandlerContext) {
        headEnded()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        switch phase {
        case .head(var scan):
            switch scan.scan(buffer.readableBytesView) {
            case .incomplete:
                phase = .head(scan)
            case .tooLong:
                phase = .done
                headEnded()
                context.close(promise: nil)
                return
            case .complete:
                // Plain HTTP or an upgrade: nothing more to watch (keep-alive idling is the HTTP server's idle
                // timeout; WebSocket frames are checked by the session handler).
                headEnded()
                phase = .done
                context.fireChannelRead(data)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            }
        case .done:
            break
        }
        context.fireChannelRead(data)
    }

    private func headEnded() {
        deadline?.cancel()
        deadline = nil
        if counted {
            counted = false
            pending.leave()
        }
    }
}

/// A server child channel with a ``ConnectionGuard`` in front of `base`'s handlers.
struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let pending: ConnectionGuard.PendingCount
    let maxPending: Int
    let headTimeout: TimeAmount

    /// How big each connection's reads start: a frame is a few hundred bytes, and the buffer grows with what
    /// arrives. A channel keeps its last read buffer while idle, and NIO's default first size (2,048 bytes) was a
    /// quarter of an idle connection's memory.
    static var receiveBuffers: AdaptiveRecvByteBufferAllocator {
        AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65_536)
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.receiveBuffers)
            try channel.pipeline.syncOperations.addHandler(
                ConnectionGuard(pending: pending, maxPending: maxPending, headTimeout: headTimeout, logger: logger))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
