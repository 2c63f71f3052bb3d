/// The connections of one endpoint (``HubState``'s sessions, ``ChannelState``'s connections) as one nested
/// machine: the table, their order, their deadlines, their outboxes and their rate limit. `Phase` is the endpoint's
/// own: where a connection is in its life; `Relayed` is what its outbox remembers about a relayed frame.
///
/// Opening and closing a session keep the five in step: a closed session leaves the order and the deadlines, and
/// its outbox leaves the totals. Only the phase is changed from outside.
package struct Sessions<Phase: Sendable & Equatable, Relayed: Sendable & Equatable>: Sendable {
    /// One connection.
    package struct Session: Sendable, Equatable {
        /// When it connected: the login or join timeout runs from here.
        package let connectedAt: Int64
        /// When its last frame arrived: the idle timeout runs from here.
        package fileprivate(set) var lastSeen: Int64
        package fileprivate(set) var phase: Phase
        fileprivate var bucket: TokenBucket
        /// Frames refused for the rate limit since the last one admitted.
        fileprivate var refusedInARow = 0
        /// What its writer has not written yet.
        package fileprivate(set) var outbox = OutboxLedger<Relayed>()
    }

    let rateLimit: RateLimit
    private var table = SessionTable<Session>()
    /// The ids in ascending order: a shutdown visits every session in this fixed order without sorting them all.
    package private(set) var order = SortedSessionIDs()
    /// When each session next needs the tick.
    private var deadlines = SessionDeadlines()
    /// Totals over the outboxes, and the sessions found too slow during the current event.
    private var outboxes: OutboxAccounting

    package init(rateLimit: RateLimit, maxOutboxFrames: Int, maxOutboxBytes: Int) {
        self.rateLimit = rateLimit
        outboxes = OutboxAccounting(maxFrames: maxOutboxFrames, maxBytes: maxOutboxBytes)
    }

    /// Open sessions.
    package var count: Int { table.count }
    /// Frames and bytes queued for all sessions' writers.
    package var queuedFrames: Int { outboxes.frames }
    package var queuedBytes: Int { outboxes.bytes }

    // MARK: - Reading

    /// The position of `id`'s session, valid until the next ``open(_:phase:now:)`` or ``close(_:)``.
    @inline(__always) package func index(forKey id: SessionID) -> Int? { table.index(forKey: id) }

    /// `id`'s session (a copy: on a hot path, ``read(at:_:)``).
    package subscript(id: SessionID) -> Session? { table[id] }

    /// The phase of the session at `index`, read without copying the rest of the session.
    @inline(__always) package func phase(at index: Int) -> Phase { table.entries[index].value.unsafelyUnwrapped.phase }

    /// The session at `index` (a copy, as above).
    @inline(__always) package subscript(at index: Int) -> Session { table[at: index] }

    /// Reads from the session at `index` where it is stored. A field read through a copy of the session retains
    /// and releases everything the session holds (callgrind: ~200 instructions a read, four reads per relayed
    /// message, scripts/callgrind_relay.sh); lent `inout`, the session is reached in place. Mutating only because
    /// that is how Swift lends a stored value without copying it.
    @inline(__always) package mutating func read<Result>(at index: Int, _ body: (Session) -> Result) -> Result {
        Self.lend(&table[at: index], body)
    }

    @inline(__always) private static func lend<Result>(_ session: inout Session, _ body: (Session) -> Result) -> Result
    {
        body(session)
    }

    // MARK: - Life

    /// Opens session `id` in `phase`. Returns false, changing nothing, if it is open already.
    package mutating func open(_ id: SessionID, phase: Phase, now: Int64) -> Bool {
        guard table.index(forKey: id) == nil else { return false }
        let bucket = TokenBucket(burst: rateLimit.burst, now: now)
        table.updateValue(Session(connectedAt: now, lastSeen: now, phase: phase, bucket: bucket), forKey: id)
        order.insert(id)
        return true
    }

    /// Moves session `id` to `phase` (nothing if it is not open).
    package mutating func setPhase(_ phase: Phase, of id: SessionID) {
        guard let index = table.index(forKey: id) else { return }
        table[at: index].phase = phase
    }

    /// Closes session `id` and returns what it was, or nil if it was not open.
    @discardableResult
    package mutating func close(_ id: SessionID) -> Session? {
        guard let session = table.removeValue(forKey: id) else { return nil }
        order.remove(id)
        deadlines.remove(id)
        outboxes.forget(session.outbox)
        return session
    }

    // MARK: - Rate limit

    /// Counts a frame from `id` received at `now` against the rate limit, and says what to do with it.
    package mutating func admit(_ id: SessionID, now: Int64) -> RateLimit.Verdict {
        // Changed where it is stored: a copy written back costs a retain and release of everything it holds.
        guard let index = table.index(forKey: id) else { return .unknownSession }
        let limit = rateLimit
        let refusedInARow = Self.count(&table[at: index], now: now, limit: limit)
        if refusedInARow == 0 { return .admitted }
        if refusedInARow > limit.maxRefusalsInARow {
            return .close("\(refusedInARow) frames in a row refused: \(limit.exceeded)")
        }
        if refusedInARow == 1 {
            return .refuseFirst(limit.exceeded + "; slow down (until you do, frames are refused without an answer)")
        }
        return .dropQuietly
    }

    /// The frame counted against `session`'s bucket: how many in a row it has refused, this one included.
    @inline(__always) private static func count(_ session: inout Session, now: Int64, limit: RateLimit) -> Int {
        session.lastSeen = now
        let taken = session.bucket.take(now: now, ratePerSecond: limit.ratePerSecond, burst: limit.burst)
        session.refusedInARow = taken ? 0 : session.refusedInARow + 1
        return session.refusedInARow
    }

    // MARK: - Outboxes

    /// Counts a frame of `cost` bytes into the outbox at `index` (of session `id`). False when it does not fit:
    /// `id` is then a slow consumer, takes no more frames, and is handed out by ``nextSlowConsumer()``.
    package mutating func enqueue(_ id: SessionID, at index: Int, cost: Int, relayed: Relayed?) -> Bool {
        outboxes.admit(id, cost: cost, relayed: relayed, into: &table[at: index].outbox)
    }

    /// Whether session `id` can take a frame of `cost` bytes now (false for a session that is not open).
    package mutating func fits(_ id: SessionID, cost: Int) -> Bool {
        guard let index = table.index(forKey: id) else { return false }
        return Self.fits(&table[at: index], id, cost: cost, outboxes: outboxes)
    }

    @inline(__always) private static func fits(
        _ session: inout Session, _ id: SessionID, cost: Int, outboxes: OutboxAccounting
    ) -> Bool {
        outboxes.fits(id, cost: cost, outbox: session.outbox)
    }

    /// `id`'s writer wrote `count` frames.
    package mutating func written(_ count: Int, by id: SessionID) {
        guard let index = table.index(forKey: id) else { return }
        outboxes.written(count, from: &table[at: index].outbox)
    }

    /// The next session of the current event to close as a slow consumer (``OutboxAccounting/nextSlowConsumer()``).
    package mutating func nextSlowConsumer() -> SessionID? { outboxes.nextSlowConsumer() }

    // MARK: - Deadlines

    /// Makes `id` due at `at`, unless it is due then or earlier already (``SessionDeadlines/schedule(_:at:)``).
    package mutating func schedule(_ id: SessionID, at: Int64) { deadlines.schedule(id, at: at) }

    /// The sessions due at `now`, in ascending order of id; each is scheduled again by whoever sees to it.
    package mutating func takeDue(now: Int64) -> [SessionID] { deadlines.takeDue(now: now) }
}
