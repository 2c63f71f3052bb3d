/// The outbox bookkeeping both endpoints' machines share (nested in ``HubState`` and ``ChannelState``): totals over
/// every session's ``OutboxLedger``, and the sessions found too slow while the current event is handled.
package struct OutboxAccounting: Sendable, Equatable {
    let maxFrames: Int
    let maxBytes: Int
    /// Frames and bytes queued for all sessions' writers.
    private(set) var frames = 0
    private(set) var bytes = 0
    /// Sessions whose outbox overflowed during the current event, in the order found: they take no more frames
    /// and are closed at its end (empty between events).
    private(set) var slowConsumers: [SessionID] = []
    /// How many of ``slowConsumers`` ``nextSlowConsumer()`` has handed out for closing.
    private var slowConsumersHandedOut = 0

    init(maxFrames: Int, maxBytes: Int) {
        self.maxFrames = maxFrames
        self.maxBytes = maxBytes
    }

    /// Whether session `id`, with `outbox`, can take a frame of `cost` bytes now.
    func fits<Relayed>(_ id: SessionID, cost: Int, outbox: OutboxLedger<Relayed>) -> Bool {
        !slowConsumers.contains(id) && outbox.fits(bytes: cost, maxFrames: maxFrames, maxBytes: maxBytes)
    }

    /// Counts a frame of `cost` bytes for session `id` into its `outbox` and returns true; or, when it does not
    /// fit (or `id` already overflowed in this event), notes `id` as a slow consumer and returns false.
    mutating func admit<Relayed>(
        _ id: SessionID, cost: Int, relayed: Relayed?, into outbox: inout OutboxLedger<Relayed>
    ) -> Bool {
        guard !slowConsumers.contains(id) else { return false }
        guard outbox.fits(bytes: cost, maxFrames: maxFrames, maxBytes: maxBytes) else {
            slowConsumers.append(id)
            return false
        }
        outbox.push(bytes: cost, relayed: relayed)
        frames += 1
        bytes += cost
        return true
    }

    /// The writer wrote `count` frames of `outbox`.
    mutating func written<Relayed>(_ count: Int, from outbox: inout OutboxLedger<Relayed>) {
        let before = (frames: outbox.frames, bytes: outbox.bytes)
        outbox.written(count)
        frames -= before.frames - outbox.frames
        bytes -= before.bytes - outbox.bytes
    }

    /// A session and its `outbox` are gone.
    mutating func forget<Relayed>(_ outbox: OutboxLedger<Relayed>) {
        frames -= outbox.frames
        bytes -= outbox.bytes
    }

    /// The next session of this event to close as a slow consumer, in the order found, including sessions found
    /// while the earlier ones are closed; each still takes no frames until the event ends. Nil once every one has
    /// been handed out, which ends the event: the list is emptied for the next.
    mutating func nextSlowConsumer() -> SessionID? {
        guard slowConsumersHandedOut < slowConsumers.count else {
            slowConsumers.removeAllInPlace()
            slowConsumersHandedOut = 0
            return nil
        }
        slowConsumersHandedOut += 1
        return slowConsumers[slowConsumersHandedOut - 1]
    }
}
