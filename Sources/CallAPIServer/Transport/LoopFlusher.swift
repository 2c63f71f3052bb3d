import CallAPIServerCore
import NIOConcurrencyHelpers
import NIOCore

/// One event loop's writer: writes and flushes the connections with pending frames, and pings the loop's
/// connections from one shared sweep (no timer or task per connection).
///
/// `schedule` may be called from any thread. Frames queued while this loop handles a connection's reads are
/// written when those reads complete, with no task; otherwise the first connection scheduled enqueues one task
/// on the loop, which writes every connection scheduled meanwhile. So frames relayed during one batch of reads
/// leave in one write per receiver, and cross-loop delivery costs one task per loop and tick, not one per frame.
final class LoopFlusher: Sendable {
    let eventLoop: any EventLoop
    private let queued = NIOLockedValueBox(Queued())
    private let sweep: NIOLoopBoundBox<Sweep>

    private struct Queued {
        var connections: [WebSocketConnection] = []
        var scheduled = false
    }

    /// The list emptied by the last flush, swapped with the queued one by the next: both keep their storage
    /// (handing out a copy would make the emptied original allocate anew every tick). Touched on the loop only.
    private let spare: NIOLoopBoundBox<[WebSocketConnection]>
    private let reads: NIOLoopBoundBox<Reads>
    /// Written buffers, emptied and kept for the next frames queued for this loop's connections (from any thread:
    /// a lock costs less than asking whether this is the loop's thread).
    private let buffers = NIOLockedValueBox<[ByteBuffer]>([])

    /// The loop's open WebSocket handlers, which the sweep visits (touched on the loop only).
    private struct Sweep {
        var handlers: [ObjectIdentifier: WebSocketSessionHandler] = [:]
        var task: RepeatedTask?
    }

    /// How often every connection is pinged; one that has neither answered nor sent anything by the next sweep
    /// is closed.
    static let pingInterval: TimeAmount = .seconds(30)

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        sweep = NIOLoopBoundBox(Sweep(), eventLoop: eventLoop)
        spare = NIOLoopBoundBox([], eventLoop: eventLoop)
        reads = NIOLoopBoundBox(.idle, eventLoop: eventLoop)
    }

    /// How many written buffers the loop keeps, and the largest it keeps: a few kilobytes per loop, whatever the
    /// number of connections (an idle connection holds no buffer).
    static let keptBuffers = 32
    static let keptBufferBytes = 4096

    /// A buffer for frames queued for one of this loop's connections: a kept one, if there is one.
    ///
    /// A new buffer costs two allocations (its storage object and its memory) and two frees once written: a
    /// buffer per connection and tick was ~2.5% of the server's instructions per relayed message (callgrind,
    /// docs/benchmarks.md).
    func buffer(capacity: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        guard var kept = buffers.withLockedValue({ $0.popLast() }) else { return allocator.buffer(capacity: capacity) }
        kept.reserveCapacity(capacity)
        return kept
    }

    /// Keeps `buffer`, written and no longer held by NIO, for ``buffer(capacity:allocator:)``.
    func recycle(_ buffer: consuming ByteBuffer) {
        guard buffer.capacity <= Self.keptBufferBytes else { return }
        // Keeps its memory when this is the only reference left (NIO took the whole write at once).
        buffer.clear()
        let emptied = consume buffer
        buffers.withLockedValue { buffers in
            if buffers.count < Self.keptBuffers { buffers.append(emptied) }
        }
    }

    /// Writes `connection`'s pending frames in this loop tick (or the next, from another thread).
    ///
    /// Frames queued while the loop handles a connection's reads are written when those reads complete
    /// (``readsCompleted()``), without a task: that task and its trip through the loop's queue were ~4% of the
    /// server's instructions per relayed message (docs/benchmarks.md).
    func schedule(_ connection: WebSocketConnection) {
        let inReads = eventLoop.inEventLoop && reads.value != .idle
        let first = queued.withLockedValue { queued -> Bool in
            queued.connections.append(connection)
            guard !queued.scheduled else { return false }
            queued.scheduled = true
            return true
        }
        guard first else { return }
        if inReads {
            reads.value = .queued
        } else {
            eventLoop.execute { self.flush() }
        }
    }

    /// Whether the loop is handling a connection's reads, and whether frames wait for them to complete.
    private enum Reads {
        case idle
        case reading
        /// Frames were queued during the reads: written when they complete.
        case queued
    }

    /// A connection's reads begin (on the loop): what is scheduled until ``readsCompleted()`` waits for it.
    func readsBegan() {
        if reads.value == .idle { reads.value = .reading }
    }

    /// The reads that ``readsBegan()`` announced are over (completed, failed, or the connection closed): what
    /// they queued is written now.
    func readsCompleted() {
        let queuedFrames = reads.value == .queued
        reads.value = .idle
        if queuedFrames { flush() }
    }

    private func flush() {
        var connections = spare.value
        spare.value = []
        queued.withLockedValue { queued in
            queued.scheduled = false
            swap(&queued.connections, &connections)
        }
        for connection in connections {
            connection.writePending()
        }
        connections.removeAllInPlace()
        spare.value = connections
    }

    /// Adds an open handler to the ping sweep (on the loop).
    func register(_ handler: WebSocketSessionHandler) {
        sweep.value.handlers[ObjectIdentifier(handler)] = handler
        guard sweep.value.task == nil else { return }
        sweep.value.task = eventLoop.scheduleRepeatedTask(
            initialDelay: Self.pingInterval, delay: Self.pingInterval
        ) { [sweep] _ in
            for handler in sweep.value.handlers.values { handler.sweep() }
        }
    }

    /// Takes a closed handler out of the sweep (on the loop); the sweep stops when no handler is left.
    func unregister(_ handler: WebSocketSessionHandler) {
        sweep.value.handlers.removeValue(forKey: ObjectIdentifier(handler))
        if sweep.value.handlers.isEmpty {
            sweep.value.task?.cancel()
            sweep.value.task = nil
        }
    }
}

/// A server's ``LoopFlusher``s, one per event loop, made on first use.
final class LoopFlushers: Sendable {
    private let flushers = NIOLockedValueBox<[ObjectIdentifier: LoopFlusher]>([:])

    func flusher(for eventLoop: any EventLoop) -> LoopFlusher {
        flushers.withLockedValue { flushers in
            let key = ObjectIdentifier(eventLoop)
            if let flusher = flushers[key] { return flusher }
            let flusher = LoopFlusher(eventLoop: eventLoop)
            flushers[key] = flusher
            return flusher
        }
    }
}
