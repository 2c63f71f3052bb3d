import CallAPIServerCore
import DequeModule
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The first handler of every connection (after TLS): times out and caps connections that have not finished
/// their HTTP request head (slowloris; past the cap the oldest of them is closed), then leaves the pipeline. (A WebSocket's frames are checked where they
/// are read, by ``WebSocketSessionHandler``.)
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    /// Connections still sending their request head, oldest first, shared by all connections of a server.
    final class PendingHeads: Sendable {
        private struct State {
            /// Entered connections in arrival order; those that left stay until they reach the front or the list
            /// is compacted (a removal from the middle would be a search).
            var order: Deque<(id: ObjectIdentifier, channel: any Channel)> = []
            var pending: Set<ObjectIdentifier> = []
        }
        private let state = NIOLockedValueBox(State())

        /// Counts `channel` as pending. When `limit` are pending already, the oldest of them is no longer counted
        /// and is returned for the caller to close: a flood of connections that never finish their head cannot
        /// keep a real client, whose head takes milliseconds, from being served.
        func enter(_ channel: any Channel, limit: Int) -> (any Channel)? {
            state.withLockedValue { state in
                var evicted: (any Channel)?
                if state.pending.count >= max(1, limit) {
                    while let oldest = state.order.popFirst() {
                        if state.pending.remove(oldest.id) != nil {
                            evicted = oldest.channel
                            break
                        }
                    }
                }
                let id = ObjectIdentifier(channel)
                state.pending.insert(id)
                state.order.append((id, channel))
                if state.order.count > 2 * state.pending.count + 64 {
                    state.order = Deque(state.order.filter { state.pending.contains($0.id) })
                }
                return evicted
            }
        }

        /// `channel` is no longer pending (its head arrived, or it closed); nothing when it was not counted.
        func leave(_ channel: any Channel) {
            _ = state.withLockedValue { $0.pending.remove(ObjectIdentifier(channel)) }
        }

        var value: Int { state.withLockedValue { $0.pending.count } }
    }

    private enum Phase {
        case head(RequestHeadScan)
        case done
    }

    private let pending: PendingHeads
    private let maxPending: Int
    private let headTimeout: TimeAmount
    private let logger: Logger
    private var phase: Phase = .head(RequestHeadScan())
    /// The connection while it is counted in `pending`.
    private var counted: (any Channel)?
    private var deadline: Scheduled<Void>?

    init(pending: PendingHeads, maxPending: Int, headTimeout: TimeAmount, logger: Logger) {
        self.pending = pending
        self.maxPending = maxPending
        self.headTimeout = headTimeout
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        if let oldest = pending.enter(channel, limit: maxPending) {
            logger.debug("connection closed: the oldest of those still sending their request head, to make room")
            oldest.close(promise: nil)
        }
        counted = channel
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
        if let channel = counted {
            counted = nil
            pending.leave(channel)
        }
    }
}

/// A server child channel with a ``ConnectionGuard`` in front of `base`'s handlers.
struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let pending: ConnectionGuard.PendingHeads
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
