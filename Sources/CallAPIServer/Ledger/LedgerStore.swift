import CallAPIServerCore
import CallAPISignalProtocol

/// Where ended calls are kept: SQLite (``SQLiteLedgerStore``) or PostgreSQL (``PostgresLedgerStore``), one schema
/// (``LedgerSchema``).
package protocol LedgerStore: Sendable {
    /// Brings the schema up to ``LedgerSchema/currentVersion`` (idempotent).
    func migrate() async throws
    /// Saves these records and these call webhook events in one transaction: after any crash either both are in
    /// the database or neither is. A call already saved keeps its first record (a call that ended stays ended).
    /// Each event is numbered here, one more than the highest number in the table, with the servers sharing the
    /// database taking turns (so numbers follow the order the transactions commit); an event whose idempotency
    /// key is already used is not added and takes no number.
    func save(_ records: [CallRecord], events: [EmittedCallEvent]) async throws -> SavedCallEvents
    /// A page of a user's calls.
    func calls(_ query: CallQuery) async throws -> CallPage
    /// The record of `callId`, if the ledger has one.
    func call(callId: String) async throws -> CallRecord?
    /// Everyone's latest calls, newest first (the operator's console), of these outcomes only when any are given.
    func recentCalls(outcomes: [CallOutcome], limit: Int) async throws -> [CallRecord]
    /// The call webhook events of `callId`, in sequence order.
    func webhookEvents(callId: String) async throws -> [StoredCallEvent]
    /// Deletes calls that ended before `cutoff` (and call reports that arrived before it); returns how many calls.
    func deleteCalls(endedBefore cutoff: Int64) async throws -> Int
    /// Keeps a device's report of a call, replacing that device's earlier one; false (nothing kept) when the call
    /// has ``StoredCallReport/maxPerCall`` reports from other devices already.
    func saveReport(_ report: StoredCallReport) async throws -> Bool
    /// The reports of `callId`, in the order they arrived.
    func reports(callId: String) async throws -> [StoredCallReport]
    /// The events not delivered yet that this server posts, by sequence number: all of them on a single server; on
    /// a node of a cluster, its own and those of no node, which it takes.
    func pendingWebhookEvents() async throws -> [StoredCallEvent]
    /// On a node of a cluster: takes the undelivered events of no node and of `nodes` (found dead), and returns
    /// them by sequence number; each is taken by one node. Nothing on a single server.
    func claimWebhookEvents(leftBy nodes: [String]) async throws -> [StoredCallEvent]
    /// On a node of a cluster that stops: its undelivered events become no node's, for a node still running to
    /// take. Nothing on a single server.
    func releaseWebhookEvents() async throws
    /// The highest sequence number in the table (0: none); a save numbers its events after it, under the lock.
    func lastWebhookSequence() async throws -> Int64
    /// Marks an event delivered.
    func markWebhookEventDelivered(seq: Int64, at: Int64) async throws
    /// Records a failed attempt and when the next one is due.
    func recordWebhookFailure(seq: Int64, attempts: Int, retryAt: Int64, problem: String) async throws
    /// Up to `limit` events after sequence number `since`, delivered or not, by sequence number.
    func webhookEvents(since: Int64, limit: Int) async throws -> [StoredCallEvent]
    /// Deletes delivered events created before `cutoff` (never the newest event, which carries the sequence on);
    /// returns how many.
    func deleteWebhookEvents(deliveredAndCreatedBefore cutoff: Int64) async throws -> Int
    /// The schema version the database is at (0: none yet).
    func schemaVersion() async throws -> Int
    /// Closes the connection; nothing may be called after.
    func close() async throws
}

extension LedgerStore {
    /// Saves these records (a call already saved keeps its first record).
    package func save(_ records: [CallRecord]) async throws { _ = try await save(records, events: []) }

    /// Adds a call webhook event to the queue table; returns it as numbered, or nil when its idempotency key is
    /// already used.
    @discardableResult
    package func insertWebhookEvent(_ event: EmittedCallEvent) async throws -> StoredCallEvent? {
        try await save([], events: [event]).stored.first
    }
}

/// What ``LedgerStore/save(_:events:)`` did with the call webhook events.
package struct SavedCallEvents: Sendable, Equatable {
    /// Those added, with their numbers, in order.
    package var stored: [StoredCallEvent] = []
    /// Those whose idempotency key was already used.
    package var refused: [EmittedCallEvent] = []

    package init(stored: [StoredCallEvent] = [], refused: [EmittedCallEvent] = []) {
        self.stored = stored
        self.refused = refused
    }
}

/// A database error, with what was being done.
public struct LedgerStoreError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
