import CallAPIServerCore
import NIOConcurrencyHelpers
import NIOCore

/// One WebSocket connection as the hubs see it: where frames for it are queued, from any thread.
///
/// Frames are written into one pending buffer per connection (the fast ones straight into it, the others copied in
/// once encoded); the connection's event loop writes
/// that buffer when the reads that queued them complete, or once per loop tick (see ``LoopFlusher``), so a burst
/// of frames costs one write and one flush, and a frame relayed from another loop costs no task of its own. What
/// reached the socket is counted in the hub's ``WriteTally`` when the write completes, which is what the state
/// machines' outbox limits are checked against.
final class WebSocketConnection: Sendable {
    let id: SessionID
    let channel: any Channel
    private let flusher: LoopFlusher
    /// The channel's allocator, asked once: through `any Channel` each ask cost a dynamic call.
    private let allocator: ByteBufferAllocator
    private let tally: WriteTally
    private let metrics: ServerMetrics?
    private let pending = NIOLockedValueBox(Pending())
    /// Where encoded frames are written (the ``WebSocketSessionHandler``'s context), while the connection is open.
    private let writer: NIOLoopBoundBox<ChannelHandlerContext?>

    /// What waits for the next loop tick.
    private struct Pending {
        var buffer: ByteBuffer?
        var frames = 0
        /// When the oldest relayed message among them arrived (for the relay latency metric). A `NIODeadline`, not
        /// a `ContinuousClock.Instant`: the standard library's instant is not frozen, so each copy of one, and of
        /// this struct, went through its value witnesses (callgrind: ~1,600 instructions per relayed message).
        var relayStartedAt: NIODeadline?
        var relayed = 0
        /// A close frame follows the frames; nothing is queued after it.
        var closing = false
        var scheduled = false
    }

    /// `metrics` gets the relay latency of relayed messages (the signaling endpoint's).
    init(id: SessionID, channel: any Channel, flusher: LoopFlusher, tally: WriteTally, metrics: ServerMetrics?) {
        self.id = id
        self.channel = channel
        self.flusher = flusher
        allocator = channel.allocator
        self.tally = tally
        self.metrics = metrics
        writer = NIOLoopBoundBox(nil, eventLoop: channel.eventLoop)
    }

    /// Starts writing through `context` (on the loop).
    func attach(_ context: ChannelHandlerContext) { writer.value = context }

    /// Stops writing: the socket closed (on the loop).
    func detach() { writer.value = nil }

    /// Queues a text frame; `relayStartedAt` when it relays a message that arrived then.
    func send(text: String, relayStartedAt: NIODeadline? = nil) {
        var text = text
        text.withUTF8 { send(utf8: UnsafeRawBufferPointer($0), relayStartedAt: relayStartedAt) }
    }

    /// Queues a text frame of UTF-8 text; `relayStartedAt` when it relays a message that arrived then.
    func send(utf8: [UInt8], relayStartedAt: NIODeadline? = nil) {
        utf8.withUnsafeBytes { send(utf8: $0, relayStartedAt: relayStartedAt) }
    }

    private func send(utf8: UnsafeRawBufferPointer, relayStartedAt: NIODeadline?) {
        queueText(bytes: utf8.count, relayStartedAt: relayStartedAt) {
            WebSocketServerFrame.writeText(utf8: utf8, into: &$0)
        }
    }

    /// Queues a text frame of at most `bound` bytes of UTF-8 text, which `text` writes straight into the pending
    /// buffer and whose length it gives; `relayStartedAt` when it relays a message that arrived then.
    func send(
        textAtMost bound: Int, relayStartedAt: NIODeadline? = nil, text: (UnsafeMutableRawBufferPointer) -> Int
    ) {
        queueText(bytes: bound, relayStartedAt: relayStartedAt) {
            WebSocketServerFrame.writeText(atMost: bound, into: &$0, text: text)
        }
    }

    private func queueText(
        bytes: Int, relayStartedAt: NIODeadline?, write: (inout ByteBuffer) -> Void
    ) {
        let schedule = pending.withLockedValue { pending -> Bool in
            guard !pending.closing else { return false }
            var buffer =
                pending.buffer
                ?? flusher.buffer(capacity: bytes + WebSocketServerFrame.largestHeaderSize, allocator: allocator)
            // Taken out while written, so that the buffer's storage is not shared and copied.
            pending.buffer = nil
            write(&buffer)
            pending.buffer = buffer
            pending.frames += 1
            if let relayStartedAt {
                pending.relayed += 1
                if pending.relayStartedAt == nil { pending.relayStartedAt = relayStartedAt }
            }
            return Self.markScheduled(&pending)
        }
        if schedule { flusher.schedule(self) }
    }

    /// Queues a close frame after what is queued; the connection closes once the client answers it, or after
    /// `WebSocketSessionHandler.closeTimeout`.
    func close(code: UInt16, reason: String?) {
        let schedule = pending.withLockedValue { pending -> Bool in
            guard !pending.closing else { return false }
            var buffer = pending.buffer ?? allocator.buffer(capacity: 4 + (reason?.utf8.count ?? 0))
            WebSocketServerFrame.writeClose(code: code, reason: reason, into: &buffer)
            pending.buffer = buffer
            pending.closing = true
            return Self.markScheduled(&pending)
        }
        if schedule { flusher.schedule(self) }
    }

    /// Queues a ping or pong (not counted as a frame: the outbox limits count the hub's frames only).
    func sendControl(opcode: UInt8, payload: ByteBuffer) {
        let schedule = pending.withLockedValue { pending -> Bool in
            guard !pending.closing else { return false }
            var buffer = pending.buffer ?? allocator.buffer(capacity: payload.readableBytes + 2)
            WebSocketServerFrame.writeControl(opcode: opcode, payload: payload, into: &buffer)
            pending.buffer = buffer
            return Self.markScheduled(&pending)
        }
        if schedule { flusher.schedule(self) }
    }

    /// Ends the connection now, without a close frame (a slow consumer, or one that never answered a close).
    func abort() {
        // Never synchronously: the caller may hold the hub's lock, which the channel's close would take again.
        channel.eventLoop.execute { [channel] in channel.close(promise: nil) }
    }

    private static func markScheduled(_ pending: inout Pending) -> Bool {
        guard !pending.scheduled else { return false }
        pending.scheduled = true
        return true
    }

    /// Writes what is pending and flushes (on the connection's event loop, from ``LoopFlusher``).
    ///
    /// What reached the socket is reported (``WriteTally``, the relay latency) once it is there. A socket that is
    /// not backed up takes the whole buffer in the write itself, so that is reported at once; only when NIO still
    /// holds bytes afterwards does a promise wait for them (on an empty write queued behind them, which NIO
    /// completes in order). A promise and its callbacks on every write were 2–4% of the server's time per relayed
    /// message (docs/benchmarks.md, "Frames read in place"). Whether NIO still holds bytes is its writability
    /// under ``writeBufferWaterMark``: asking for `bufferedWritableBytes` cost three times as many instructions.
    func writePending() {
        channel.eventLoop.assertInEventLoop()
        var taken = pending.withLockedValue { pending -> Pending in
            let taken = pending
            pending.buffer = nil
            pending.frames = 0
            pending.relayed = 0
            pending.relayStartedAt = nil
            pending.scheduled = false
            return taken
        }
        // Moved out, so that once NIO has written it this is its only reference, and it can be kept for reuse.
        guard let buffer = taken.buffer.take(), let context = writer.value else { return }
        let written = Written(
            id: id, tally: tally, metrics: metrics, frames: taken.frames,
            relay: taken.relayStartedAt.map { ($0, taken.relayed) })
        if taken.closing {
            // Once the close frame is on the wire: the handler closes the socket, or waits for the client's answer.
            let promise = channel.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(NIOAny(buffer), promise: promise)
            let channel = channel
            promise.futureResult.whenComplete { result in
                if case .success = result { written.report() }
                WebSocketSessionHandler.closeSent(on: channel)
            }
            return
        }
        context.writeAndFlush(NIOAny(buffer), promise: nil)
        if channel.isWritable {
            written.report()
            flusher.recycle(consume buffer)
            return
        }
        guard channel.isActive else { return }
        let promise = channel.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(NIOAny(allocator.buffer(capacity: 0)), promise: promise)
        promise.futureResult.whenSuccess { written.report() }
    }

    /// The write buffer water marks of a WebSocket connection: with both at one byte, NIO's writability says
    /// exactly whether it holds any of the connection's bytes (a write adds at least a frame header, two bytes, so
    /// it turns the channel unwritable until every byte is on the socket). The handler swallows the two
    /// writability events each write then fires.
    static let writeBufferWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 1, high: 1)

    /// What one write carried, reported once it reached the socket.
    private struct Written: Sendable {
        let id: SessionID
        let tally: WriteTally
        let metrics: ServerMetrics?
        let frames: Int
        /// When the oldest relayed message arrived, and how many were relayed.
        let relay: (startedAt: NIODeadline, count: Int)?

        func report() {
            if frames > 0 { tally.wrote(id, frames: frames) }
            guard let relay, let metrics else { return }
            let nanoseconds = (NIODeadline.now() - relay.startedAt).nanoseconds
            for _ in 0..<relay.count { metrics.relayLatency(nanoseconds: nanoseconds) }
        }
    }
}
