import CallAPIServerCore
import CallAPISignalProtocol
import Logging
import NIOConcurrencyHelpers

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The ledger's shell: runs ``CallLedgerMachine`` for the hub (synchronously, under a lock, so the hub's relay is
/// never delayed by the database) and writes ended calls to the ``LedgerStore`` from one background task, in order:
/// whatever ended while the previous write ran is saved in one transaction.
final class CallLedger: Sendable {
    let settings: LedgerSettings
    let store: any LedgerStore
    /// The durable call webhooks (docs/webhooks.md), when a URL is configured.
    let webhooks: CallWebhooks?
    private let machine: NIOLockedValueBox<CallLedgerMachine>
    /// In a cluster: the users other nodes' ledgers have in accepted calls, as the link last read them.
    private let remoteBusy = NIOLockedValueBox(RemoteBusy())
    /// In a cluster: calls handed off (``LedgerAction/handOff(_:)``) not yet released by the link, which takes them at
    /// its next write of the calls in progress (at most one per call that was in progress here).
    private let handOffs = NIOLockedValueBox<[LiveCallSnapshot]>([])
    /// Ended calls not yet taken by the writer, at most `settings.writeQueueLimit`.
    private let pending = NIOLockedValueBox(PendingRecords())
    /// Tells the writer that records are pending (or that no more will come, when finished).
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let progress = WriteProgress()
    private let clock: any SignalServerClock
    private let metrics: ServerMetrics
    private let logger: Logger

    /// Opens the configured store (migrating it), and the call webhooks' queue when they are configured, and
    /// returns the ledger. `node` names this server's node in a cluster (its webhook events are its to post), and
    /// `handOffMillis` how long a call may have no participant's session on it before it is handed to a node that has one.
    static func open(
        settings: LedgerSettings, node: String? = nil, handOffMillis: Int64? = nil, clock: any SignalServerClock,
        metrics: ServerMetrics, logger: Logger
    ) async throws -> CallLedger {
        let store = try await openStore(settings.database, owner: node, logger: logger)
        var webhooks: CallWebhooks?
        if let webhook = settings.webhook {
            do {
                webhooks = try await CallWebhooks.open(
                    settings: webhook, database: settings.database, node: node, ledgerStore: store, clock: clock,
                    metrics: metrics, logger: logger)
            } catch {
                try? await store.close()
                throw error
            }
        }
        return CallLedger(
            settings: settings, store: store, webhooks: webhooks, handOffMillis: handOffMillis, clock: clock,
            metrics: metrics, logger: logger)
    }

    /// Closes the stores of a ledger that will never run (the server failed to start after opening it).
    func closeUnused() async {
        if let webhooks, webhooks.ownsStore { try? await webhooks.store.close() }
        try? await store.close()
    }

    /// A connection to `database`, migrated; `owner` is the cluster node whose webhook events it stores and posts.
    static func openStore(
        _ database: LedgerSettings.Database, owner: String? = nil, logger: Logger
    ) async throws -> any LedgerStore {
        switch database {
        case .memory:
            try await SQLiteLedgerStore.open(path: nil, owner: owner)
        case .sqlite(let path):
            try await SQLiteLedgerStore.open(path: path, owner: owner)
        case .postgres(let url):
            try await PostgresLedgerStore.open(url: url, owner: owner, logger: logger)
        }
    }

    init(
        settings: LedgerSettings, store: any LedgerStore, webhooks: CallWebhooks? = nil, handOffMillis: Int64? = nil,
        clock: any SignalServerClock = SystemServerClock(), metrics: ServerMetrics, logger: Logger
    ) {
        self.settings = settings
        self.clock = clock
        self.store = store
        self.webhooks = webhooks
        self.metrics = metrics
        self.logger = logger
        var limits = settings.limits
        limits.handOffMillis = handOffMillis
        machine = NIOLockedValueBox(CallLedgerMachine(limits: limits))
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Feeds the machine and performs its actions: the records of ended calls and the call webhook events go to
    /// the writer together, all or none, so that a call's record and its events share one transaction. Returns the
    /// rings the ledger ended, whose sides the hub tells (the ledger runs under the hub's lock, so it cannot).
    @discardableResult
    func handle(_ input: LedgerInput, now: Int64) -> [AbandonedRing] {
        let actions = machine.withLockedValue { $0.handle(input, now: now) }
        let abandoned = actions.isEmpty ? [] : queue(actions, now: now)
        if case .tick = input { webhooks?.tick(now: now) }
        return abandoned
    }

    private func queue(_ actions: [LedgerAction], now: Int64) -> [AbandonedRing] {
        var records: [CallRecord] = []
        var events: [EmittedCallEvent] = []
        var abandoned: [AbandonedRing] = []
        for action in actions {
            switch action {
            case .save(let record):
                records.append(record)
            case .notify(let event):
                if let admitted = webhooks?.admit(event, now: now) { events.append(admitted) }
            case .endRing(let ring):
                abandoned.append(ring)
            case .handOff(let call):
                handOffs.withLockedValue { $0.append(call) }
                logger.info(
                    "call handed off: its participants are on other nodes",
                    metadata: ["callId": "\(call.callId)", "caller": "\(call.caller)", "callee": "\(call.callee)"])
            }
        }
        defer {
            for ring in abandoned {
                logger.info(
                    "ring ended by the server: neither side spoke of it for the ring window",
                    metadata: ["callId": "\(ring.callId)", "caller": "\(ring.caller)", "callee": "\(ring.callee)"])
            }
        }
        let limit = max(1, settings.writeQueueLimit)
        let accepted = pending.withLockedValue { pending in
            guard !pending.finished, records.isEmpty || pending.records.count + records.count <= limit else {
                return false
            }
            pending.records += records
            pending.events += events
            pending.accepted += records.count
            return true
        }
        if accepted {
            wake.yield()
            for record in records {
                logger.debug(
                    "call ended",
                    metadata: [
                        "callId": "\(record.callId)", "outcome": "\(record.outcome.rawValue)",
                        "reason": "\(record.endReason)",
                    ])
            }
            return abandoned
        }
        for record in records {
            metrics.ledgerRecordLost()
            logger.error(
                "call ledger: record not written, the write queue is full or closed",
                metadata: ["callId": "\(record.callId)", "outcome": "\(record.outcome.rawValue)"])
        }
        for event in events {
            webhooks?.notStored(event, problem: "the ledger's write queue is full or closed", now: now)
        }
        return abandoned
    }

    /// The accepted call `user` is in, if any: recorded here, or (in a cluster) by another node.
    func busyCall(of user: String) -> String? {
        machine.withLockedValue { $0.busyCall(of: user) } ?? remoteBusy.withLockedValue { $0.call(of: user)?.callId }
    }

    /// Whether `callId` is a call in progress between these two users, here or (accepted) on another node.
    func isCall(_ callId: String, between a: String, and b: String) -> Bool {
        machine.withLockedValue { $0.isCall(callId, between: a, and: b) }
            || remoteBusy.withLockedValue {
                $0.isCall(callId, between: a, and: b) || $0.isCall(callId, between: b, and: a)
            }
    }

    /// The users in an accepted call this node's ledger recorded (a cluster's link publishes them).
    var busyUsers: [BusyUser] { machine.withLockedValue { $0.busyUsers } }

    /// The calls in progress this node's ledger recorded or took over (a cluster's link publishes them).
    var liveCallSnapshots: [LiveCallSnapshot] { machine.withLockedValue { $0.liveCallSnapshots } }

    /// In a cluster: the calls handed off since the last call, for the link to release; a release that fails puts
    /// them back (``returnHandOffs(_:)``).
    func takeHandOffs() -> [LiveCallSnapshot] {
        handOffs.withLockedValue { pending in
            defer { pending = [] }
            return pending
        }
    }

    /// Hand-offs the link could not release, to try again first at its next write.
    func returnHandOffs(_ calls: [LiveCallSnapshot]) {
        handOffs.withLockedValue { $0 = calls + $0 }
    }

    /// In a cluster: takes over the calls in progress that another node recorded (it died or left).
    func adopt(_ adopted: AdoptedCalls) {
        handle(.adopted(adopted), now: clock.nowMillis())
    }

    /// In a cluster: the users in accepted calls that other nodes recorded, replacing the last view.
    func setRemoteBusy(_ busy: RemoteBusy) {
        remoteBusy.withLockedValue { $0 = busy }
    }

    /// Calls in progress.
    var liveCallCount: Int { machine.withLockedValue { $0.liveCallCount } }

    /// A page of a user's calls, after every call that had ended when it was asked has been written.
    func calls(_ query: CallQuery) async throws -> CallPage {
        await progress.waitUntilWritten(pending.withLockedValue { $0.accepted })
        return try await store.calls(query)
    }

    /// Everyone's latest calls, newest first, after every call that had ended when it was asked has been written.
    func recentCalls(outcomes: [CallOutcome], limit: Int) async throws -> [CallRecord] {
        await progress.waitUntilWritten(pending.withLockedValue { $0.accepted })
        return try await store.recentCalls(outcomes: outcomes, limit: limit)
    }

    /// The answer to a session's `calls` request: a page, or an error frame that says what was wrong.
    func answer(_ request: ClientFrame.CallsRequest, userId: String) async -> ServerFrame {
        var cursor: CallCursor?
        if let text = request.cursor {
            guard let value = CallCursor(text) else {
                return .error(
                    .init(id: request.id, code: .invalidFrame, message: "\"cursor\" is not one this server gave"))
            }
            cursor = value
        }
        let limit = request.limit ?? 50
        guard (1...CallQuery.maxLimit).contains(limit) else {
            return .error(
                .init(id: request.id, code: .invalidFrame, message: "\"limit\" must be 1 to \(CallQuery.maxLimit)"))
        }
        let query =
            request.missed == true
            ? CallQuery.missed(userId: userId, since: request.since, limit: limit, cursor: cursor)
            : CallQuery(userId: userId, since: request.since, limit: limit, cursor: cursor)
        do {
            let page = try await calls(query)
            return .calls(.init(id: request.id, calls: page.calls, nextCursor: page.nextCursor?.description))
        } catch {
            logger.error("call ledger: a calls request failed: \(error)")
            return .error(.init(id: request.id, code: .internalError, message: "the call ledger could not be read"))
        }
    }

    /// Keeps a call report (docs/timeline.md): `reported`, or an `error` saying why not.
    func keep(_ report: StoredCallReport) async -> ServerFrame {
        let id = report.report.id
        do {
            guard try await store.saveReport(report) else {
                return .error(
                    .init(
                        id: id, code: .invalidFrame,
                        message: "call \(report.report.callId) has \(StoredCallReport.maxPerCall) reports already"))
            }
            return .reported(.init(id: id))
        } catch {
            logger.error("call ledger: a call report could not be saved: \(error)")
            return .error(.init(id: id, code: .internalError, message: "the call ledger could not keep the report"))
        }
    }

    /// The record of `callId`, if the ledger has one (after every call that had ended when it was asked has been
    /// written), and its reports.
    func timeline(callId: String) async throws -> (record: CallRecord?, reports: [StoredCallReport]) {
        await progress.waitUntilWritten(pending.withLockedValue { $0.accepted })
        return (try await store.call(callId: callId), try await store.reports(callId: callId))
    }

    /// Deletes calls past the retention (if one is set); returns how many.
    @discardableResult
    func applyRetention(now: Int64) async -> Int {
        if let webhooks {
            let deleted = await webhooks.applyRetention(now: now)
            if deleted > 0 { logger.info("call webhooks: retention deleted \(deleted) delivered events") }
        }
        guard let days = settings.retentionDays else { return 0 }
        do {
            let deleted = try await store.deleteCalls(endedBefore: now - Int64(days) * 86_400_000)
            if deleted > 0 { logger.info("call ledger: retention deleted \(deleted) calls older than \(days) days") }
            return deleted
        } catch {
            logger.error("call ledger: retention failed: \(error)")
            return 0
        }
    }

    /// Writes ended calls, in order, until ``finish()``, then the rest; each write is retried a few times before it
    /// is logged and counted as lost.
    func run() async {
        for await _ in wakeups {
            // A moment for more calls to end, so that a busy server writes them in one transaction (each one
            // costs three trips to the database's thread) rather than one by one as each ends.
            if pending.withLockedValue({ $0.records.count < Self.rowsWorthWaitingFor }) {
                try? await Task.sleep(for: Self.gatherWindow)
            }
            await writePending()
        }
        await writePending()
        // A store shared with the call webhooks (in memory) is theirs to close: they stop after the ledger.
        if webhooks?.ownsStore != false { try? await store.close() }
        await progress.markDone()
    }

    /// How many times the writer tries a write: 0.1 s after the first failure, doubling to 2 s, about 17 s in all,
    /// long enough to wait out a restart of PostgreSQL (five tries, 3 s in all, lost the records of calls that
    /// ended during one in ClusterCallFaultTests).
    static let writeAttempts = 12

    /// How long the writer waits after a call ends for others to end too, unless this many are already waiting.
    static let gatherWindow: Duration = .milliseconds(10)
    static let rowsWorthWaitingFor = 64

    private func writePending() async {
        let (records, events) = pending.withLockedValue { pending in
            defer {
                pending.records.removeAll(keepingCapacity: true)
                pending.events.removeAll(keepingCapacity: true)
            }
            return (pending.records, pending.events)
        }
        if !records.isEmpty || !events.isEmpty { await write(records, events) }
    }

    /// Saves ended calls and call webhook events in one transaction, retried a few times before it is logged and
    /// counted as lost; then tells the webhooks which events they may post.
    private func write(_ records: [CallRecord], _ events: [EmittedCallEvent]) async {
        var delay: Duration = .milliseconds(100)
        for attempt in 1...Self.writeAttempts {
            do {
                let saved = try await store.save(records, events: events)
                await progress.written(records.count)
                let now = clock.nowMillis()
                webhooks?.stored(saved.stored, now: now)
                for event in saved.refused {
                    webhooks?.notStored(
                        event, problem: "its idempotency key was used already (the call had ended)", now: now)
                }
                return
            } catch {
                logger.warning("call ledger: write failed (attempt \(attempt) of \(Self.writeAttempts)): \(error)")
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
        if !records.isEmpty {
            metrics.ledgerRecordLost()
            logger.error("call ledger: \(records.count) records not written after \(Self.writeAttempts) attempts")
        }
        for event in events {
            webhooks?.notStored(event, problem: "the database could not store it", now: clock.nowMillis())
        }
        await progress.written(records.count)
    }

    /// No more records: ``run()`` writes what is queued, closes the store and returns.
    func finish() {
        pending.withLockedValue { $0.finished = true }
        wake.finish()
    }

}

/// Ended calls waiting for the ledger's writer.
private struct PendingRecords {
    var records: [CallRecord] = []
    /// Call webhook events to number and store with them, in the order the ledger emitted them.
    var events: [EmittedCallEvent] = []
    /// Records accepted since the ledger opened (the writer's count of those handled is in `WriteProgress`).
    var accepted = 0
    /// No record is accepted once the ledger is finishing.
    var finished = false
}

/// How many records the writer has handled, and who waits for a count.
private actor WriteProgress {
    private var written = 0
    private var done = false
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    func written(_ count: Int) {
        written += count
        let ready = waiters.filter { $0.count <= written }
        waiters.removeAll { $0.count <= written }
        for waiter in ready { waiter.continuation.resume() }
    }

    func waitUntilWritten(_ count: Int) async {
        guard written < count, !done else { return }
        await withCheckedContinuation { waiters.append((count, $0)) }
    }

    func markDone() {
        done = true
        for waiter in waiters { waiter.continuation.resume() }
        waiters = []
    }
}
