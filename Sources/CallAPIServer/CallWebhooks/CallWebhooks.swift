import AsyncHTTPClient
import CallAPIServerCore
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The call webhooks' shell (docs/webhooks.md): runs ``CallWebhookMachine`` under a lock, admits the ledger's events
/// for the ledger's writer to number and store (in the same transaction as the call's record, ``CallLedger``), writes their
/// delivery state from one task in order (a connection of its own to the ledger's database), and posts events with
/// AsyncHTTPClient, as many at once as the machine allows.
final class CallWebhooks: Sendable {
    /// The header carrying the event's idempotency key (also in the body as `idempotencyKey`).
    static let idempotencyKeyHeader = "Idempotency-Key"
    /// The header carrying the event's sequence number.
    static let sequenceHeader = "X-CallAPI-Sequence"
    /// The header counting attempts at this event, from 1.
    static let attemptHeader = "X-CallAPI-Attempt"

    let settings: CallWebhookSettings
    /// The queue table's connection (also read by the replay endpoint).
    let store: any LedgerStore
    /// Whether `store` is a connection of the queue's own, rather than the ledger's (in memory). Either way ``run()``
    /// closes it as it ends: the webhooks stop after the ledger.
    let ownsStore: Bool
    private let machine: NIOLockedValueBox<CallWebhookMachine>
    private let clock: any SignalServerClock
    private let jitter: @Sendable () -> Double
    private let writes: AsyncStream<StoreWrite>
    private let writeContinuation: AsyncStream<StoreWrite>.Continuation
    private let posts: AsyncStream<Post>
    private let postContinuation: AsyncStream<Post>.Continuation
    private let activity = Activity()
    private let claims = NIOLockedValueBox(Claims())
    private let metrics: ServerMetrics
    private let logger: Logger

    /// A change to the queue table (events are added by the ledger's writer).
    enum StoreWrite: Sendable {
        case markDelivered(seq: Int64, at: Int64)
        case recordFailure(seq: Int64, attempts: Int, retryAt: Int64, problem: String)
    }

    /// The claims of other nodes' events asked for (``claim(leftBy:)``): one runs at a time.
    private struct Claims {
        /// Dead nodes whose events are still to take.
        var nodes: Set<String> = []
        /// A claim was asked for since the running one took its nodes.
        var asked = false
        var running = false
        /// The webhooks are stopping: no claim starts (this node hands its events back instead).
        var finished = false
    }

    struct Post: Sendable {
        var event: StoredCallEvent
        var attempt: Int
    }

    /// Opens the queue table in `database` (migrating it) and picks up the events a previous run left undelivered.
    /// An in-memory database exists once per connection: then the queue uses `ledgerStore`, the ledger's own.
    /// `jitter` returns a number in 0...1 for each retry delay.
    static func open(
        settings: CallWebhookSettings, database: LedgerSettings.Database, node: String? = nil,
        ledgerStore: any LedgerStore,
        clock: any SignalServerClock, jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        metrics: ServerMetrics, logger: Logger
    ) async throws -> CallWebhooks {
        let ownsStore = database != .memory
        let store =
            ownsStore ? try await CallLedger.openStore(database, owner: node, logger: logger) : ledgerStore
        let pending: [StoredCallEvent]
        do {
            pending = try await store.pendingWebhookEvents()
        } catch {
            if ownsStore { try? await store.close() }
            throw error
        }
        if !pending.isEmpty {
            logger.notice("call webhooks: \(pending.count) undelivered events from before the restart are queued")
        }
        let machine = CallWebhookMachine(limits: settings.limits, pending: pending)
        return CallWebhooks(
            settings: settings, store: store, ownsStore: ownsStore, machine: machine, clock: clock, jitter: jitter,
            metrics: metrics, logger: logger)
    }

    private init(
        settings: CallWebhookSettings, store: any LedgerStore, ownsStore: Bool, machine: CallWebhookMachine,
        clock: any SignalServerClock, jitter: @escaping @Sendable () -> Double, metrics: ServerMetrics, logger: Logger
    ) {
        self.settings = settings
        self.store = store
        self.ownsStore = ownsStore
        self.machine = NIOLockedValueBox(machine)
        self.clock = clock
        self.jitter = jitter
        self.metrics = metrics
        self.logger = logger
        // Both are bounded by the machine: one write per stored or delivered event plus one per attempt in flight,
        // and at most `maxConcurrentDeliveries` posts.
        (writes, writeContinuation) = AsyncStream.makeStream(of: StoreWrite.self)
        (posts, postContinuation) = AsyncStream.makeStream(of: Post.self)
        metrics.callWebhookPending(machine.pendingCount)
    }

    /// The ledger saw a moment of a call: the event for the ledger's writer to number and store, or nil when the
    /// queue is full (refused, counted and logged). Answer with ``stored(_:now:)`` or ``notStored(_:problem:now:)``.
    func admit(_ event: CallEvent, now: Int64) -> EmittedCallEvent? {
        machine.withLockedValue { machine in
            var admitted: EmittedCallEvent?
            for action in machine.handle(.emitted(event), now: now) {
                if case .store(let emitted) = action {
                    activity.begin()  // until it is stored or given up
                    admitted = emitted
                } else {
                    perform(action)
                }
            }
            metrics.callWebhookPending(machine.pendingCount)
            return admitted
        }
    }

    /// The ledger's writer stored these events, with the numbers it gave them: they may be posted.
    func stored(_ events: [StoredCallEvent], now: Int64) {
        for event in events {
            handle(.stored(event), now: now)
            activity.end()
        }
    }

    /// The ledger's writer could not store the event `event` (`problem` says why): it is given up.
    func notStored(_ event: EmittedCallEvent, problem: String, now: Int64) {
        metrics.callWebhookRefused()
        logger.error(
            "call webhook event refused: \(problem)", metadata: ["idempotencyKey": "\(event.idempotencyKey)"])
        handle(.notStored(key: event.idempotencyKey), now: now)
        activity.end()
    }

    /// Time passed: retries that are due start.
    func tick(now: Int64) { handle(.tick, now: now) }

    /// On a node of a cluster: takes the undelivered events of no node and of `nodes` (found dead by this node's
    /// sweep, which no other node learns of), which this node posts from now on. Called on each sweep without
    /// waiting: one claim runs at a time, and the nodes of a claim that failed or had to wait go with the next.
    func claim(leftBy nodes: [String]) {
        let start: Bool = claims.withLockedValue { claims in
            guard !claims.finished else { return false }
            claims.nodes.formUnion(nodes)
            claims.asked = true
            guard !claims.running else { return false }
            claims.running = true
            return true
        }
        guard start else { return }
        Task {
            while let nodes = nextClaim() {
                do {
                    let claimed = try await store.claimWebhookEvents(leftBy: nodes.sorted())
                    guard !claimed.isEmpty else { continue }
                    logger.notice(
                        "call webhooks: took over undelivered events of no node or of nodes found dead",
                        metadata: ["count": "\(claimed.count)", "nodes": "\(nodes.sorted())"])
                    handle(.adopted(claimed), now: clock.nowMillis())
                } catch {
                    logger.warning("call webhooks: could not take over the events of nodes that are gone: \(error)")
                    claims.withLockedValue { claims in
                        claims.nodes.formUnion(nodes)
                        claims.running = false
                    }
                    return
                }
            }
        }
    }

    /// The nodes to claim from now (the set is emptied), or nil once nothing is asked: the claim stops running.
    private func nextClaim() -> Set<String>? {
        claims.withLockedValue { claims in
            guard claims.asked, !claims.finished else {
                claims.running = false
                return nil
            }
            defer {
                claims.nodes = []
                claims.asked = false
            }
            return claims.nodes
        }
    }

    /// Undelivered events.
    var pendingCount: Int { machine.withLockedValue { $0.pendingCount } }

    /// Feeds the machine and performs its actions, under the lock so that writes and posts leave in the machine's
    /// order (the writer stores a call's events in sequence).
    private func handle(_ input: CallWebhookInput, now: Int64) {
        machine.withLockedValue { machine in
            for action in machine.handle(input, now: now) {
                perform(action)
            }
            metrics.callWebhookPending(machine.pendingCount)
        }
    }

    private func perform(_ action: CallWebhookAction) {
        switch action {
        case .store(let event):
            // Only ``admit(_:now:)`` feeds `.emitted`, and it hands the event to the ledger's writer.
            assertionFailure("call webhook event \(event.idempotencyKey) to store outside admit(_:now:)")
        case .refuse(let event, let reason):
            metrics.callWebhookRefused()
            logger.error(
                "call webhook event refused",
                metadata: [
                    "idempotencyKey": "\(StoredCallEvent.idempotencyKey(callId: event.callId, kind: event.kind))",
                    "problem": "\(reason)",
                ])
        case .post(let event, let attempt):
            activity.begin()
            if case .terminated = postContinuation.yield(Post(event: event, attempt: attempt)) {
                activity.end()  // stopping: the event stays in the table for the next run
            }
        case .markDelivered(let seq, let at):
            metrics.callWebhookDelivered()
            write(.markDelivered(seq: seq, at: at))
        case .recordFailure(let seq, let attempts, let retryAt, let problem):
            metrics.callWebhookAttemptFailed()
            logger.warning(
                "call webhook delivery failed",
                metadata: [
                    "seq": "\(seq)", "attempts": "\(attempts)", "retryAt": "\(retryAt)", "problem": "\(problem)",
                ])
            write(.recordFailure(seq: seq, attempts: attempts, retryAt: retryAt, problem: problem))
        }
    }

    private func write(_ write: StoreWrite) {
        activity.begin()
        if case .terminated = writeContinuation.yield(write) {
            activity.end()  // stopping: the event stays undelivered in the table for the next run
        }
    }

    /// Posts and writes until ``finish()``: then lets the posts in flight end, writes what is queued, closes the
    /// store and returns. Undelivered events stay in the table for the next run.
    func run() async {
        var configuration = HTTPClient.Configuration()
        // A refused connection fails the attempt at once: the machine retries on its own schedule (the client's
        // default would keep reconnecting until the attempt's deadline).
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .milliseconds(settings.timeoutMillis)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        handle(.tick, now: clock.nowMillis())  // events left by the previous run
        await withDiscardingTaskGroup { group in
            group.addTask { await self.runWriter() }
            group.addTask {
                await withDiscardingTaskGroup { posting in
                    for await post in self.posts {
                        posting.addTask { await self.deliver(post, with: client) }
                    }
                }
                self.writeContinuation.finish()
            }
        }
        try? await client.shutdown()
        do {
            // A node leaving a cluster: its undelivered events go to the nodes left, once no claim of this node's is
            // in flight (one finishing later would take events back for a node that is gone).
            for _ in 0..<200 where claims.withLockedValue({ $0.running }) {
                try? await Task.sleep(for: .milliseconds(10))
            }
            try await store.releaseWebhookEvents()
        } catch {
            logger.warning("call webhooks: undelivered events not handed to the other nodes: \(error)")
        }
        try? await store.close()  // a shared store too: the webhooks stop after the ledger
        await activity.markDone()
    }

    /// No more posts (nor claims): ``run()`` finishes what is in flight and returns.
    func finish() {
        claims.withLockedValue { $0.finished = true }
        postContinuation.finish()
    }

    /// Waits until no write or post is queued or in flight (retries waiting for their time do not count).
    func waitUntilIdle() async { await activity.waitUntilIdle() }

    private func runWriter() async {
        for await write in writes {
            await perform(write)
            activity.end()
        }
    }

    private func perform(_ write: StoreWrite) async {
        var delay: Duration = .milliseconds(100)
        for attempt in 1...5 {
            do {
                switch write {
                case .markDelivered(let seq, let at):
                    try await store.markWebhookEventDelivered(seq: seq, at: at)
                case .recordFailure(let seq, let attempts, let retryAt, let problem):
                    try await store.recordWebhookFailure(
                        seq: seq, attempts: attempts, retryAt: retryAt, problem: problem)
                }
                return
            } catch {
                logger.warning("call webhooks: a queue table write failed (attempt \(attempt) of 5): \(error)")
                try? await Task.sleep(for: delay)
                delay *= 2
            }
        }
        switch write {
        case .markDelivered(let seq, _), .recordFailure(let seq, _, _, _):
            // The event stays undelivered in the table: a restarted server posts it again (at least once).
            logger.error("call webhooks: the state of event \(seq) could not be written")
        }
    }

    private func deliver(_ post: Post, with client: HTTPClient) async {
        let event = post.event
        var request = HTTPClientRequest(url: settings.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: Self.idempotencyKeyHeader, value: event.idempotencyKey)
        request.headers.add(name: Self.sequenceHeader, value: String(event.seq))
        request.headers.add(name: Self.attemptHeader, value: String(post.attempt))
        if let secret = settings.secret {
            request.headers.add(
                name: WebhookNotifier.signatureHeader, value: WebhookNotifier.signature(of: event.body, secret: secret))
        }
        request.body = .bytes(ByteBuffer(string: event.body))
        let problem: String
        do {
            let response = try await client.execute(request, timeout: .milliseconds(settings.timeoutMillis))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if (200..<300).contains(response.status.code) {
                handle(.delivered(seq: event.seq), now: clock.nowMillis())
                activity.end()
                return
            }
            problem = "the receiver answered \(response.status.code)"
        } catch {
            problem = "\(error)"
        }
        handle(.failed(seq: event.seq, problem: problem, jitter: jitter()), now: clock.nowMillis())
        activity.end()
    }

    /// Deletes delivered events past the retention; returns how many.
    func applyRetention(now: Int64) async -> Int {
        do {
            return try await store.deleteWebhookEvents(
                deliveredAndCreatedBefore: now - Int64(settings.retentionDays) * 86_400_000)
        } catch {
            logger.error("call webhooks: retention failed: \(error)")
            return 0
        }
    }
}

/// Writes and posts queued or in flight, and who waits for none to be (tests); none are once the run has ended.
private final class Activity: Sendable {
    private struct State {
        var outstanding = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        var done = false
    }
    private let state = NIOLockedValueBox(State())

    func begin() { state.withLockedValue { $0.outstanding += 1 } }

    func end() {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.outstanding -= 1
            guard state.outstanding == 0 else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLockedValue { state in
                if state.outstanding == 0 || state.done { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    func markDone() async {
        let waiters = state.withLockedValue { state in
            state.done = true
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
