@_spi(ServerShell) import CallAPIServerCore
import DequeModule
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// A node's link to its cluster (docs/scale-out.md): the shell of ``ClusterMembership`` and of the hub's
/// ``ClusterAction``s, over PostgreSQL.
///
/// Three loops share one pool of connections: the control loop runs the membership machine (register, heartbeat,
/// sweep, read presence, read the mailbox); the writer performs the hub's actions in the order the hub decided,
/// forwards batched into one statement; the listener holds its own connection (LISTEN cannot share a pooled one),
/// is woken by notifications and, after every reconnect, has the mailbox and presence read again: a notification
/// missed while it was away costs a poll's latency, never a message.
final class ClusterLink: Sendable {
    let settings: ClusterSettings
    private let store: ClusterStore
    /// Claims the RTC channels whose first member joined here.
    let channelHomes: ClusterChannelHomes
    private let client: PostgresClient
    private let listenConfiguration: PostgresConnection.Configuration
    private let clock: any SignalServerClock
    private let logger: Logger
    private let metrics: ClusterMetrics
    /// The call ledger: its busy users are published for the other nodes, theirs read for it, and its webhooks take
    /// over the undelivered events of the nodes this node's sweep finds dead.
    private let ledger: CallLedger?
    private let state: NIOLockedValueBox<LinkState>
    /// Which mailbox rows go at once from their notification and which wait for a read, and the messages decided on
    /// and not yet handed to the hub (``arrive(_:)``).
    private let deliveries = NIOLockedValueBox(Arrivals())
    private let controlWake: AsyncStream<Void>.Continuation
    private let controlSignals: AsyncStream<Void>
    private let writerWake: AsyncStream<Void>.Continuation
    private let writerSignals: AsyncStream<Void>
    private let readerWake: AsyncStream<Void>.Continuation
    private let readerSignals: AsyncStream<Void>
    private let stopWake: AsyncStream<Void>.Continuation
    private let stopSignals: AsyncStream<Void>

    /// The most mailbox rows one read takes.
    static let readLimit = 500
    /// The most envelopes one forward statement writes.
    static let batchLimit = 500

    private struct LinkState {
        var membership: ClusterMembership
        var work = Deque<Work>()
        var pendingEnvelopes = 0
        var woken = false
        var othersChanged = false
        /// How many times the listener has listened (once, plus once per reconnect).
        var listens = 0
        /// When the placed calls handed to this node were last read (ms since 1970).
        var placementsReadAt: Int64 = 0
        /// Whether a notification said invitation steps wait for this node.
        var invitationsWoken = false
        /// The last change of the cluster's device rows read (0: none yet, so the first read takes them all).
        var devicesRead: Int64 = 0
        /// Whether the devices this node had before it joined (its `devices.json`) were written for the others.
        var devicesImported = false
        /// The hub the link reports to (set once it exists; let go when the link stops).
        var hub: SignalHub?
        /// The busy users last published, and under which epoch (nil: none yet).
        var busyPublished: (epoch: Int64, users: [BusyUser])?
        /// The calls in progress last published, by call id, and under which epoch (nil: none yet).
        var callsPublished: (epoch: Int64, calls: [String: LiveCallSnapshot])?
    }

    private enum Work {
        case hub(ClusterAction)
        case resync(epoch: Int64)
        /// An invitation step whose write failed, tried again.
        case invitationRetry(InvitationRelay, attempt: Int)
    }

    /// How many times an invitation step is written before it is given up (half a second apart): the invitation's
    /// windows then end it on both sides, as for a session that does not answer.
    static let invitationStepAttempts = 5

    init(
        settings: ClusterSettings, clock: any SignalServerClock, metrics: ClusterMetrics,
        ledger: CallLedger? = nil, logger: Logger
    ) throws {
        if let problem = ClusterSettings.problem(nodeId: settings.nodeId) { throw ClusterError(problem) }
        let connection = try PostgresLedgerStore.configuration(url: settings.databaseURL)
        var configuration = PostgresClient.Configuration(
            host: connection.host ?? "127.0.0.1", port: connection.port ?? 5432, username: connection.username,
            password: connection.password, database: connection.database, tls: .disable)
        configuration.options.maximumConnections = 4
        configuration.options.minimumConnections = 2
        // Commits return before their WAL is flushed: the mailbox's guarantee holds while PostgreSQL is up (a node's
        // death loses nothing), and a crash of PostgreSQL itself can lose the last fraction of a second of writes
        // (3 × wal_writer_delay); a clean restart loses none. Waiting for the flush cost ~5 ms per cross-node hop on
        // this kind of machine (docs/scale-out.md).
        configuration.options.additionalStartupParameters = [("synchronous_commit", "off")]
        self.settings = settings
        listenConfiguration = connection
        var logger = logger
        logger[metadataKey: "node"] = "\(settings.nodeId)"
        self.logger = logger
        self.metrics = metrics
        self.ledger = ledger
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        if let url = settings.advertisedURL, let problem = ClusterSettings.problem(advertisedURL: url) {
            throw ClusterError(problem)
        }
        store = ClusterStore(client: client, nodeId: settings.nodeId, url: settings.advertisedURL, logger: logger)
        channelHomes = ClusterChannelHomes(store: store, logger: logger)
        self.clock = clock
        state = NIOLockedValueBox(LinkState(membership: ClusterMembership(timings: settings.timings)))
        (controlSignals, controlWake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (writerSignals, writerWake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (readerSignals, readerWake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (stopSignals, stopWake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Creates the cluster's tables if they are missing (at start, so that a wrong database URL stops the server
    /// with a clear error).
    func migrate() async throws {
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: listenConfiguration, id: 1, logger: logger)
        } catch {
            throw ClusterError(
                "cannot connect to the cluster database at \(PostgresLedgerStore.redacted(settings.databaseURL)): "
                    + "\(String(reflecting: error))")
        }
        do {
            try await ClusterStore.migrate(connection, logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    /// The hub the link reports to.
    func attach(_ hub: SignalHub) {
        state.withLockedValue { $0.hub = hub }
    }

    /// How many times the notification listener has started listening: 1, plus one per reconnect.
    var listens: Int { state.withLockedValue { $0.listens } }

    /// This node's epoch while it is a member.
    var epoch: Int64? { state.withLockedValue { $0.membership.epoch } }

    // MARK: - The hub's actions

    /// Queues one of the hub's actions (called under the hub's lock: it never calls back into the hub itself).
    func perform(_ action: ClusterAction) {
        let refused: Bool = state.withLockedValue { state in
            if case .forward(let envelopes, _) = action {
                guard state.pendingEnvelopes + envelopes.count <= settings.maxPendingEnvelopes else { return true }
                state.pendingEnvelopes += envelopes.count
                metrics.pendingEnvelopes.record(state.pendingEnvelopes)
            }
            state.work.append(.hub(action))
            return false
        }
        guard refused else {
            writerWake.yield()
            return
        }
        guard case .forward(let envelopes, let receipt) = action else { return }
        let reason = "\(settings.maxPendingEnvelopes) messages already wait to be written to other nodes"
        logger.warning(
            "a message for another node was refused",
            metadata: ["messageId": "\(envelopes.first?.messageId ?? "-")", "reason": "\(reason)"])
        if let receipt { Task { report(.forwardFailed(receipt, reason: reason)) } }
    }

    private func report(_ event: ClusterEvent) {
        state.withLockedValue { $0.hub }?.handleCluster(event)
    }

    // MARK: - Running

    /// Runs the link until ``finish()``; then leaves the cluster (its rows deleted at once) and returns.
    func run() async {
        // Detached: `PostgresClient.run()` ends at the server's graceful shutdown (it is a ServiceLifecycle service),
        // which would close the pool before the node has left the cluster through it.
        let pool = Task.detached { [client] in await client.run() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.controlLoop() }
            group.addTask { await self.writeLoop() }
            group.addTask { await self.readLoop() }
            group.addTask { await self.listenLoop() }
            group.addTask { await self.tickLoop() }
            group.addTask { await self.channelHomes.run(epoch: { self.epoch }) }
            for await _ in stopSignals { break }
            // The calls in progress as they are now, for the survivor that takes them over: not as they were at the
            // last presence read, when some that have ended since were still in progress.
            await publishCalls()
            let leave = state.withLockedValue { $0.membership.handle(.stop, now: clock.nowMillis()) }
            for case .leave(let epoch) in leave {
                // Bounded: with the database unreachable the node still stops, and the others find it dead.
                let left = await withTaskGroup(of: Bool.self) { attempt in
                    attempt.addTask {
                        do {
                            try await self.store.leave(epoch: epoch)
                            return true
                        } catch {
                            self.logger.warning(
                                "leaving the cluster failed", metadata: ["error": "\(self.describe(error))"])
                            return false
                        }
                    }
                    attempt.addTask {
                        try? await Task.sleep(for: .milliseconds(self.settings.deadAfterMillis))
                        return false
                    }
                    let first = await attempt.next() ?? false
                    attempt.cancelAll()
                    return first
                }
                if left {
                    logger.notice("left the cluster")
                } else {
                    logger.warning("could not leave the cluster: the others will find this node dead")
                }
            }
            group.cancelAll()
        }
        pool.cancel()
        await pool.value
        state.withLockedValue { $0.hub = nil }
    }

    /// Ends ``run()``.
    func finish() {
        stopWake.yield()
    }

    private func tickLoop() async {
        while !Task.isCancelled {
            controlWake.yield()
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    private func controlLoop() async {
        for await _ in controlSignals {
            var inputs: [ClusterMembership.Input] = [.tick]
            state.withLockedValue { state in
                if state.woken { inputs.append(.woken) }
                if state.othersChanged { inputs.append(.othersChanged) }
                state.woken = false
                state.othersChanged = false
            }
            for input in inputs { await run(input) }
            let invitationsWoken = state.withLockedValue { state in
                defer { state.invitationsWoken = false }
                return state.invitationsWoken
            }
            if invitationsWoken { await readInvitationSteps() }
        }
    }

    private func run(_ input: ClusterMembership.Input) async {
        let actions = state.withLockedValue { $0.membership.handle(input, now: clock.nowMillis()) }
        for action in actions {
            if let outcome = await perform(action) { await run(outcome) }
        }
    }

    /// Performs a membership action; returns what came of it when the machine needs to know.
    private func perform(_ action: ClusterMembership.Action) async -> ClusterMembership.Input? {
        switch action {
        case .register:
            do {
                let epoch = try await Self.bounded { try await self.store.register() }
                logger.notice("joined the cluster", metadata: ["epoch": "\(epoch)"])
                metrics.member.record(1)
                channelHomes.registered(epoch: epoch)
                return .registered(epoch: epoch)
            } catch {
                logger.warning("could not join the cluster; retrying", metadata: ["error": "\(describe(error))"])
                return .registerFailed
            }
        case .republish(let epoch):
            state.withLockedValue { $0.work.append(.resync(epoch: epoch)) }
            writerWake.yield()
        case .beat(let epoch):
            do {
                if try await Self.bounded({ try await self.store.beat(epoch: epoch) }) { return .beatSaved }
                logger.warning("this node was declared dead by the cluster; joining again")
                metrics.member.record(0)
                return .beatLost
            } catch {
                logger.warning("could not save the heartbeat", metadata: ["error": "\(describe(error))"])
                return .beatFailed
            }
        case .sweep:
            do {
                let dead = try await Self.bounded {
                    try await self.store.sweep(deadAfterMillis: self.settings.deadAfterMillis)
                }
                if !dead.isEmpty { logger.notice("nodes declared dead", metadata: ["nodes": "\(dead)"]) }
                // Only the node whose sweep found them dead learns their names (the rows are gone): it takes their
                // undelivered call webhook events, and on every sweep those of nodes that left.
                ledger?.webhooks?.claim(leftBy: dead)
            } catch {
                logger.warning("could not sweep dead nodes", metadata: ["error": "\(describe(error))"])
            }
            await adoptCalls()
        case .readPresence:
            do {
                let view = try await Self.bounded {
                    try await self.store.remotePresence(deadAfterMillis: self.settings.deadAfterMillis)
                }
                metrics.remoteUsers.record(view.users.count)
                metrics.remoteSessions.record(view.sessionCount)
                report(.remotePresence(view))
            } catch {
                logger.warning("could not read the other nodes' sessions", metadata: ["error": "\(describe(error))"])
            }
            await readDevices()
            await readTombstones()
            await syncBusy()
            await publishCalls()
        case .poll:
            // Read by the reader's own loop: a read never waits behind a heartbeat, nor the control loop behind it.
            readerWake.yield()
            // Placed calls handed over are read here, at most once per poll interval (a quarter second): not on
            // every mailbox wake, which would add a statement per message between nodes. Invitation steps too (they
            // have a channel of their own; this catches a notification missed).
            await readPlacements()
        case .leave:
            break  // done by `run` as it stops
        }
        return nil
    }

    /// Publishes this node's busy users when they changed since the last time (or the epoch did), and reads the
    /// other nodes' for the ledger's busy answers: once per presence read, so at most that far behind.
    private func syncBusy() async {
        guard let ledger, let epoch else { return }
        let users = ledger.busyUsers
        let changed = state.withLockedValue { state in
            state.busyPublished.map { $0.epoch != epoch || $0.users != users } ?? true
        }
        do {
            if changed {
                try await Self.bounded { try await self.store.publishBusy(users, epoch: epoch) }
                state.withLockedValue { $0.busyPublished = (epoch, users) }
            }
            let remote = try await Self.bounded {
                try await self.store.remoteBusy(deadAfterMillis: self.settings.deadAfterMillis)
            }
            ledger.setRemoteBusy(remote)
        } catch {
            logger.warning("could not share the users in calls", metadata: ["error": "\(describe(error))"])
        }
    }

    /// Writes the ledger's calls in progress that changed since the last time, and deletes those that ended: once per
    /// presence read, so a node that dies loses at most the calls that began (or were answered) in its last second.
    private func publishCalls() async {
        guard let ledger, let epoch else { return }
        // Taken before the live calls are read: a call handed off meanwhile is in neither, and released next time.
        let handedOff = ledger.takeHandOffs()
        let calls = ledger.liveCallSnapshots
        let published = state.withLockedValue { state in
            state.callsPublished.flatMap { $0.epoch == epoch ? $0.calls : nil } ?? [:]
        }
        let changed = calls.filter { published[$0.callId] != $0 }
        let live = Set(calls.map(\.callId))
        let released = Set(handedOff.map(\.callId))
        // A call handed off is not ended: its row is released for another node, not deleted.
        let ended = published.keys.filter { !live.contains($0) && !released.contains($0) }.sorted()
        guard !changed.isEmpty || !ended.isEmpty || !handedOff.isEmpty else { return }
        do {
            if !handedOff.isEmpty {
                try await Self.bounded { try await self.store.releaseCalls(handedOff, epoch: epoch) }
            }
            try await Self.bounded { try await self.store.publishCalls(changed: changed, ended: ended, epoch: epoch) }
            let now = Dictionary(uniqueKeysWithValues: calls.map { ($0.callId, $0) })
            state.withLockedValue { $0.callsPublished = (epoch, now) }
        } catch {
            ledger.returnHandOffs(handedOff)
            logger.warning("could not share the calls in progress", metadata: ["error": "\(describe(error))"])
        }
    }

    /// Takes over the calls in progress of nodes that died or left, for this node's ledger to finish: after every
    /// sweep, so that exactly one survivor (the first to claim each row) ends each of them by the usual rules. A
    /// node takes at once the calls of users logged in to it, whose messages its ledger will hear, and the others
    /// once ``ClusterTimings/callTakeoverGraceMillis`` have passed (their users reconnect elsewhere, or nowhere).
    private func adoptCalls() async {
        guard let ledger, let epoch else { return }
        // The hub is taken out of the lock before it is asked: the hub performs its actions (``perform(_:)``, which
        // takes this lock) under its own lock, so asking it under this one could deadlock the two.
        let hub = state.withLockedValue { $0.hub }
        let users = Set(hub?.loggedInSessions.map(\.userId) ?? []).sorted()
        do {
            let claimed = try await Self.bounded {
                try await self.store.claimCalls(
                    epoch: epoch, users: users, graceMillis: self.settings.timings.callTakeoverGraceMillis)
            }
            for adopted in claimed.adopted {
                logger.notice(
                    "took over calls in progress",
                    metadata: ["node": "\(adopted.node)", "calls": "\(adopted.calls.count)"])
                ledger.adopt(adopted)
                // Their rows are this node's now, as if it had written them: one that ends before the next presence
                // read must be deleted then, not left behind because this node never published it.
                state.withLockedValue { state in
                    var published = state.callsPublished.flatMap { $0.epoch == epoch ? $0.calls : nil } ?? [:]
                    for call in adopted.calls { published[call.callId] = call }
                    state.callsPublished = (epoch, published)
                }
            }
            if !claimed.unreadable.isEmpty {
                logger.error(
                    "calls in progress of another node could not be read; left in callapi_cluster_calls",
                    metadata: ["calls": "\(claimed.unreadable)"])
            }
        } catch {
            logger.warning("could not take over calls in progress", metadata: ["error": "\(describe(error))"])
        }
    }

    /// Takes the placed calls other nodes handed to this one and gives them to the hub.
    private func readPlacements() async {
        let now = clock.nowMillis()
        let due = state.withLockedValue { state in
            guard now - state.placementsReadAt >= settings.timings.pollMillis else { return false }
            state.placementsReadAt = now
            return true
        }
        guard due, let epoch else { return }
        do {
            let placements = try await Self.bounded {
                try await self.store.takePlacements(epoch: epoch, limit: Self.readLimit)
            }
            if !placements.isEmpty { report(.placements(placements)) }
        } catch {
            logger.warning("could not read the placed calls for this node", metadata: ["error": "\(describe(error))"])
        }
        await readInvitationSteps()
    }

    /// Takes the steps of invitations other nodes passed to this one and gives them to the hub.
    private func readInvitationSteps() async {
        guard let epoch else { return }
        do {
            while true {
                let read = try await Self.bounded {
                    try await self.store.takeInvitationSteps(epoch: epoch, limit: Self.readLimit)
                }
                if !read.unreadable.isEmpty {
                    logger.error(
                        "invitation steps from other nodes could not be read (a newer version's?); dropped",
                        metadata: ["steps": "\(read.unreadable)"])
                }
                if !read.relays.isEmpty { report(.invitations(read.relays)) }
                if read.relays.count + read.unreadable.count < Self.readLimit { break }
            }
        } catch {
            logger.warning(
                "could not read the invitation steps for this node", metadata: ["error": "\(describe(error))"])
        }
    }

    /// Reads the other nodes' tombstones not expired and hands them to the hub, which keeps the new ones.
    private func readTombstones() async {
        do {
            let read = try await Self.bounded { try await self.store.tombstones(now: self.clock.nowMillis()) }
            if !read.unreadable.isEmpty {
                logger.error(
                    "tombstones in the cluster database have a reason this version does not know",
                    metadata: ["calls": "\(read.unreadable)"])
            }
            if !read.tombstones.isEmpty { report(.tombstones(read.tombstones)) }
        } catch {
            logger.warning("could not read the cluster's tombstones", metadata: ["error": "\(describe(error))"])
        }
    }

    /// Reads the device lists written since the last read (all of them at the first) and hands them to the hub.
    private func readDevices() async {
        await importDevices()
        do {
            var lists: [UserDevices] = []
            while true {
                let after = state.withLockedValue { $0.devicesRead }
                let read = try await Self.bounded { try await self.store.devices(after: after, limit: Self.readLimit) }
                for user in read.undecodable {
                    logger.error(
                        "a user's push devices in the cluster database do not decode", metadata: ["user": "\(user)"])
                }
                lists += read.lists
                state.withLockedValue { $0.devicesRead = read.last }
                if read.lists.count + read.undecodable.count < Self.readLimit { break }
            }
            if !lists.isEmpty { report(.devices(lists)) }
        } catch {
            logger.warning("could not read the cluster's push devices", metadata: ["error": "\(describe(error))"])
        }
    }

    /// Once, before the first read of the cluster's devices: the users whose devices this node had before it joined
    /// (a single server's `devices.json`, or devices registered while the cluster was out of reach) and that the
    /// cluster has no list for are written for the others. A user the cluster has a list for keeps that list: it is
    /// newer, and the read that follows replaces this node's with it.
    private func importDevices() async {
        guard !state.withLockedValue({ $0.devicesImported }) else { return }
        let hub = state.withLockedValue { $0.hub }
        guard let hub else { return }
        let lists = hub.devices.users.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }
            .map { UserDevices(userId: $0.key, entries: $0.value) }
        do {
            if !lists.isEmpty {
                let written = try await Self.bounded { try await self.store.importDevices(lists) }
                if written > 0 {
                    logger.notice(
                        "wrote the push devices this node had before it joined the cluster",
                        metadata: ["users": "\(written)", "known": "\(lists.count)"])
                }
            }
            state.withLockedValue { $0.devicesImported = true }
        } catch {
            logger.warning(
                "could not write this node's push devices for the cluster; trying again at the next read",
                metadata: ["error": "\(describe(error))"])
        }
    }

    // MARK: - Reader

    /// Reads the mailbox each time it is woken (by a notification, or the membership's poll), while a member.
    private func readLoop() async {
        for await _ in readerSignals {
            guard let epoch else { continue }
            do {
                // Until a read takes fewer than it may: a backlog is drained at once, not one read per wake.
                while true {
                    let number = deliveries.withLockedValue { $0.machine.readStarts() }
                    let rows = try await Self.bounded {
                        try await self.store.take(epoch: epoch, limit: Self.readLimit)
                    }
                    let drained = rows.count < Self.readLimit
                    arrive { $0.read(number, rows: rows, drained: drained) }
                    if drained { break }
                }
            } catch {
                logger.warning("could not read the mailbox", metadata: ["error": "\(describe(error))"])
            }
        }
    }

    // MARK: - Writer

    private enum Batch {
        case forward([ClusterEnvelope], [ForwardReceipt])
        case unclaim([ClusterEnvelope])
        case devices(UserDevices)
        case tombstone(UserTombstone)
        case placeCall(ForwardedPlacement)
        case invitation(InvitationRelay, attempt: Int)
        case matchEnter(ClusterMatchEntry, maxWaiting: Int)
        case matchLeave(user: String)
        case matchSessionClosed(SessionID)
        case park(ClusterEnvelope, expiresAt: Int64, receipt: ForwardReceipt)
        case unpark([String])
        case online(SessionRow)
        case offline(SessionID)
        case resync(epoch: Int64)
    }

    private func writeLoop() async {
        for await _ in writerSignals {
            while let batch = nextBatch() { await write(batch) }
        }
    }

    /// The next work in order; consecutive forwards go together, up to ``batchLimit`` envelopes.
    private func nextBatch() -> Batch? {
        state.withLockedValue { state in
            guard let first = state.work.popFirst() else { return nil }
            switch first {
            case .resync(let epoch): return .resync(epoch: epoch)
            case .hub(.online(let row)): return .online(row)
            case .hub(.offline(let session, _)): return .offline(session)
            case .hub(.unclaimed(let envelopes)): return .unclaim(envelopes)
            case .hub(.devices(let list)): return .devices(list)
            case .hub(.tombstone(let tombstone)): return .tombstone(tombstone)
            case .hub(.placeCall(let placement)): return .placeCall(placement)
            case .hub(.invitation(let relay)): return .invitation(relay, attempt: 1)
            case .hub(.matchEnter(let entry, let maxWaiting)): return .matchEnter(entry, maxWaiting: maxWaiting)
            case .hub(.matchLeave(let user)): return .matchLeave(user: user)
            case .hub(.matchSessionClosed(let session)): return .matchSessionClosed(session)
            case .invitationRetry(let relay, let attempt): return .invitation(relay, attempt: attempt)
            case .hub(.park(let envelope, let expiresAt, let receipt)):
                return .park(envelope, expiresAt: expiresAt, receipt: receipt)
            case .hub(.unpark(let messageIds)): return .unpark(messageIds)
            case .hub(.forward(var envelopes, let receipt)):
                var receipts = receipt.map { [$0] } ?? []
                while case .hub(.forward(let more, let receipt)) = state.work.first,
                    envelopes.count + more.count <= Self.batchLimit
                {
                    state.work.removeFirst()
                    envelopes += more
                    if let receipt { receipts.append(receipt) }
                }
                return .forward(envelopes, receipts)
            }
        }
    }

    private func write(_ batch: Batch) async {
        let epoch = self.epoch
        switch batch {
        case .forward(let envelopes, let receipts):
            var failure: String?
            if let epoch {
                do {
                    let written = try await Self.bounded {
                        try await self.store.forward(envelopes, epoch: epoch, keepSeconds: self.settings.mailboxSeconds)
                    }
                    if !written {
                        failure = "this node is joining the cluster again"
                    }
                } catch {
                    failure = "the cluster database did not take it: \(describe(error))"
                }
            } else {
                failure = "this node is joining the cluster"
            }
            let pending = state.withLockedValue { state in
                state.pendingEnvelopes -= envelopes.count
                return state.pendingEnvelopes
            }
            metrics.pendingEnvelopes.record(pending)
            if let failure {
                metrics.writeFailures.increment()
                logger.warning(
                    "messages for other nodes were not written",
                    metadata: ["count": "\(envelopes.count)", "reason": "\(failure)"])
            }
            for receipt in receipts {
                report(failure.map { .forwardFailed(receipt, reason: $0) } ?? .forwarded(receipt))
            }
        case .unclaim(let envelopes):
            do {
                try await Self.bounded {
                    try await self.store.unclaim(envelopes, keepSeconds: self.settings.mailboxSeconds)
                }
            } catch {
                metrics.writeFailures.increment()
                logger.error(
                    "messages whose receiver left this node could not be put back in the mailbox: lost",
                    metadata: ["count": "\(envelopes.count)", "error": "\(describe(error))"])
            }
        case .park(let envelope, let expiresAt, let receipt):
            // Not written (not a member, or the database failed): the message stays held in memory, as on a single
            // node, without its parked copy.
            var failure: String?
            if let epoch {
                do {
                    try await Self.bounded { try await self.store.park(envelope, expiresAt: expiresAt, epoch: epoch) }
                } catch {
                    failure = describe(error)
                }
            } else {
                failure = "this node is joining the cluster"
            }
            if let failure {
                metrics.writeFailures.increment()
                logger.warning(
                    "a held message could not be parked in the cluster database: it lives only in this node's memory",
                    metadata: ["messageId": "\(envelope.messageId)", "reason": "\(failure)"])
            }
            report(failure.map { .forwardFailed(receipt, reason: $0) } ?? .forwarded(receipt))
        case .unpark(let messageIds):
            do {
                try await Self.bounded { try await self.store.unpark(messageIds) }
            } catch {
                // Left parked: if this node dies before they expire, their receiver may get them a second time.
                metrics.writeFailures.increment()
                logger.warning(
                    "parked messages could not be taken out of the cluster database",
                    metadata: ["count": "\(messageIds.count)", "error": "\(describe(error))"])
            }
        case .placeCall(let placement):
            // The business server was told the call is placed: one that cannot be handed over is logged (the
            // caller's node never hears of it, and no record is made).
            var failure: String?
            if let epoch {
                do {
                    let written = try await Self.bounded {
                        try await self.store.place(placement, epoch: epoch, keepSeconds: self.settings.mailboxSeconds)
                    }
                    if !written { failure = "this node is joining the cluster again" }
                } catch {
                    failure = "the cluster database did not take it: \(describe(error))"
                }
            } else {
                failure = "this node is joining the cluster"
            }
            if let failure {
                metrics.writeFailures.increment()
                logger.error(
                    "a server-placed call could not be handed to its caller's node",
                    metadata: ["callId": "\(placement.callId)", "node": "\(placement.node)", "reason": "\(failure)"])
            }
        case .invitation(let relay, let attempt):
            var failure: String?
            if let epoch {
                do {
                    let written = try await Self.bounded {
                        try await self.store.pass(relay, epoch: epoch, keepSeconds: self.settings.mailboxSeconds)
                    }
                    if !written { failure = "this node is joining the cluster again" }
                } catch {
                    failure = describe(error)
                }
            } else {
                failure = "this node is joining the cluster"
            }
            guard let failure else { return }
            metrics.writeFailures.increment()
            guard attempt < Self.invitationStepAttempts else {
                logger.error(
                    "an invitation step for another node could not be written; given up (the invitation's windows end it)",
                    metadata: ["node": "\(relay.node)", "attempts": "\(attempt)", "reason": "\(failure)"])
                return
            }
            logger.warning(
                "an invitation step for another node could not be written; retrying",
                metadata: ["node": "\(relay.node)", "attempt": "\(attempt)", "reason": "\(failure)"])
            Task {
                try? await Task.sleep(for: .milliseconds(500))
                state.withLockedValue { $0.work.append(.invitationRetry(relay, attempt: attempt + 1)) }
                writerWake.yield()
            }
        case .matchEnter(let entry, let maxWaiting):
            let outcome: ClusterMatchOutcome
            if let epoch {
                do {
                    outcome = try await Self.bounded {
                        try await self.store.enterMatch(entry, maxWaiting: maxWaiting, epoch: epoch)
                    }
                } catch {
                    metrics.writeFailures.increment()
                    outcome = .failed(reason: "the cluster database did not take it: \(describe(error))")
                }
            } else {
                outcome = .failed(reason: "this node is joining the cluster")
            }
            report(.matchEntered(entry, outcome))
        case .matchLeave(let user):
            do {
                try await Self.bounded { try await self.store.leaveMatch(user: user) }
            } catch {
                // Its row stays until its session closes or its node goes: it may still be matched meanwhile.
                metrics.writeFailures.increment()
                logger.warning(
                    "a user who left the match queue could not be taken out of it",
                    metadata: ["user": "\(user)", "error": "\(describe(error))"])
            }
        case .matchSessionClosed(let session):
            do {
                try await Self.bounded { try await self.store.matchSessionClosed(session) }
            } catch {
                metrics.writeFailures.increment()
                logger.warning(
                    "the match queue entry of a closed session could not be taken out",
                    metadata: ["session": "\(session)", "error": "\(describe(error))"])
            }
        case .devices(let list):
            do {
                try await Self.bounded { try await self.store.saveDevices(list) }
            } catch {
                // Written again after a pause: the other nodes must not keep a device list that changed here.
                metrics.writeFailures.increment()
                logger.warning(
                    "could not write a user's push devices for the other nodes; retrying",
                    metadata: ["user": "\(list.userId)", "error": "\(describe(error))"])
                Task {
                    try? await Task.sleep(for: .milliseconds(settings.heartbeatMillis))
                    state.withLockedValue { $0.work.append(.hub(.devices(list))) }
                    writerWake.yield()
                }
            }
        case .tombstone(let entry):
            do {
                try await Self.bounded { try await self.store.saveTombstone(entry) }
            } catch {
                // Kept here either way: a login here learns it; one on another node does not.
                metrics.writeFailures.increment()
                logger.warning(
                    "could not write a withdrawn call's tombstone for the other nodes",
                    metadata: [
                        "user": "\(entry.userId)", "callId": "\(entry.tombstone.callId)", "error": "\(describe(error))",
                    ])
            }
        case .online(let row):
            // Not a member: the sessions are written when it has joined again.
            guard let epoch else { return }
            do {
                try await Self.bounded { try await self.store.publish([row], epoch: epoch) }
            } catch {
                resyncLater(epoch: epoch, error)
            }
        case .offline(let session):
            do {
                try await Self.bounded { try await self.store.offline(session) }
            } catch {
                if let epoch { resyncLater(epoch: epoch, error) }
            }
        case .resync(let epoch):
            let sessions = state.withLockedValue { $0.hub }?.loggedInSessions ?? []
            do {
                try await Self.bounded { try await self.store.resync(sessions, epoch: epoch) }
            } catch {
                resyncLater(epoch: epoch, error)
            }
        }
    }

    /// A presence write failed: the rows are written whole again after a pause, so none stays wrong.
    private func resyncLater(epoch: Int64, _ error: any Error) {
        metrics.writeFailures.increment()
        logger.warning("could not write presence; writing it whole again", metadata: ["error": "\(describe(error))"])
        Task {
            try? await Task.sleep(for: .milliseconds(settings.heartbeatMillis))
            state.withLockedValue { $0.work.append(.resync(epoch: epoch)) }
            writerWake.yield()
        }
    }

    // MARK: - Listener

    private func listenLoop() async {
        var attempt = 0
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: listenConfiguration, id: 2, logger: logger)
                attempt = 0
                do {
                    try await listen(on: connection)
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if Task.isCancelled { return }
                attempt += 1
                logger.warning(
                    "the cluster's notification connection failed; reconnecting",
                    metadata: ["error": "\(describe(error))", "attempt": "\(attempt)"])
            }
            try? await Task.sleep(for: .milliseconds(min(250 * attempt, 2_000)))
        }
    }

    private func listen(on connection: PostgresConnection) async throws {
        let logger = logger
        try await connection.listen(on: ClusterStore.mailboxChannel(of: settings.nodeId)) { mailbox in
            try await connection.listen(on: ClusterStore.presenceChannel) { presence in
                try await connection.listen(on: ClusterStore.invitationChannel(of: self.settings.nodeId)) {
                    invitations in
                    self.state.withLockedValue { $0.listens += 1 }
                    self.metrics.listens.increment()
                    // What was sent while the listener was away is read now, and what comes next waits for it.
                    self.deliveries.withLockedValue { $0.machine.listening() }
                    self.state.withLockedValue { $0.invitationsWoken = true }
                    wake(mailbox: true, presence: true)
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for try await notification in mailbox { self.mailboxNotified(notification.payload) }
                            throw ClusterError("the mailbox notifications ended")
                        }
                        group.addTask {
                            for try await _ in presence { self.wake(mailbox: false, presence: true) }
                            throw ClusterError("the presence notifications ended")
                        }
                        group.addTask {
                            for try await _ in invitations {
                                self.state.withLockedValue { $0.invitationsWoken = true }
                                self.controlWake.yield()
                            }
                            throw ClusterError("the invitation notifications ended")
                        }
                        group.addTask {
                            // A restarted server may close the socket without an error reaching the listener.
                            while true {
                                try await Task.sleep(for: .seconds(2))
                                for try await _ in try await connection.query("SELECT 1", logger: logger) {}
                            }
                        }
                        try await group.next()
                        group.cancelAll()
                    }
                }
            }
        }
    }

    /// A notification for this node's mailbox: its rows delivered at once when ``MailboxDeliveries`` allows it (the
    /// poll's read deletes them later), else the reader woken.
    private func mailboxNotified(_ payload: String) {
        guard epoch != nil else { return wake(mailbox: true, presence: false) }
        let rows = MailboxNotice.rows(payload, node: settings.nodeId)
        var read = false
        var delivered = 0
        arrive { deliveries in
            switch deliveries.notified(rows) {
            case .deliver(let envelopes):
                delivered = envelopes.count
                return envelopes
            case .read:
                read = true
                return []
            }
        }
        if delivered > 0 { metrics.notifiedDeliveries.increment(by: Int64(delivered)) }
        if read { wake(mailbox: true, presence: false) }
    }

    /// ``MailboxDeliveries`` with the messages it let through, queued in the order decided.
    private struct Arrivals {
        var machine = MailboxDeliveries()
        var queued: [ClusterEnvelope] = []
        /// Whether a caller of ``arrive(_:)`` is handing the queue to the hub.
        var handing = false
    }

    /// Runs `decide` on the mailbox's deliveries and hands what it lets through to the hub, in the order decided by
    /// the listener and the reader together: the queue is handed over outside the lock (the hub is never called under
    /// it), by one caller at a time, who also hands over what the other queued meanwhile.
    private func arrive(_ decide: (inout MailboxDeliveries) -> [ClusterEnvelope]) {
        let hands = deliveries.withLockedValue { arrivals in
            arrivals.queued += decide(&arrivals.machine)
            guard !arrivals.handing, !arrivals.queued.isEmpty else { return false }
            arrivals.handing = true
            return true
        }
        guard hands else { return }
        while true {
            let next = deliveries.withLockedValue { arrivals -> [ClusterEnvelope] in
                let next = arrivals.queued
                arrivals.queued = []
                if next.isEmpty { arrivals.handing = false }
                return next
            }
            if next.isEmpty { return }
            report(.arrived(next))
        }
    }

    private func wake(mailbox: Bool, presence: Bool) {
        state.withLockedValue { state in
            if mailbox { state.woken = true }
            if presence { state.othersChanged = true }
        }
        // The reader at once; the membership hears of it too, and puts its poll timer back.
        if mailbox { readerWake.yield() }
        controlWake.yield()
    }

    /// How long one statement may take before the link gives up on it: with the database unreachable, postgres-nio's
    /// pool waits for a connection indefinitely, and a node must say what it refuses instead of hanging.
    static let statementTimeout: Duration = .seconds(2)

    /// Runs `operation`, failing with a ``ClusterError`` after ``statementTimeout`` (the operation is cancelled).
    static func bounded<Value: Sendable>(_ operation: @escaping @Sendable () async throws -> Value) async throws
        -> Value
    {
        try await withThrowingTaskGroup(of: Value.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(for: Self.statementTimeout)
                throw ClusterError("the cluster database did not answer within \(Self.statementTimeout)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    private func describe(_ error: any Error) -> String { ClusterError.describe(error) }
}
