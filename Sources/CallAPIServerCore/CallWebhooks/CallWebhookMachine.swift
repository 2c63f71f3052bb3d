/// Durable call webhooks as a pure state machine: it has the shell store the ledger's call events (the store numbers
/// them, in the order their transactions commit, so that servers sharing a database never give out one number
/// twice), and hands them out for posting — in order per call (a call's next event waits until the previous one was
/// delivered), at most ``CallWebhookLimits/maxConcurrentDeliveries`` at once across calls, each failure retried
/// after an exponential, capped, jittered delay (``CallWebhookLimits/retryDelay(afterAttempts:jitter:)``).
///
/// An event is given up only when the store cannot take it; a delivered one is marked (never deleted here).
/// Memory and the table are bounded by ``CallWebhookLimits/maxPendingEvents``: over it a new event is refused
/// (``CallWebhookAction/refuse(_:reason:)``), never dropped silently.
package struct CallWebhookMachine: Sendable {
    /// Where the oldest undelivered event of a call stands.
    enum Head: Sendable, Equatable {
        /// Due now, waiting in line for a delivery slot.
        case ready
        /// Failed; the next attempt is due at this time.
        case waiting(until: Int64)
        /// Being posted.
        case posting(attempt: Int)
    }

    /// A call's undelivered, stored events, oldest first (the first is the head).
    struct CallQueue: Sendable, Equatable {
        var events: [StoredCallEvent]
        var head: Head
    }

    package let limits: CallWebhookLimits
    /// Events handed to the store and not yet reported, counted by idempotency key.
    private var writing: [String: Int] = [:]
    private var writingCount = 0
    private var queues: [String: CallQueue] = [:]
    /// Calls whose head is ``Head/ready``, first come first served (`readyCalls[readyStart...]`).
    private var readyCalls: [String] = []
    private var readyStart = 0
    /// The events being posted, by sequence number, with their call.
    private var posting: [Int64: String] = [:]
    /// Stored, undelivered events in `queues`.
    private var queuedCount = 0

    /// A machine with the undelivered events a store kept (`pending`), whose attempts resume when they are due (the
    /// first ``CallWebhookInput/tick``).
    package init(limits: CallWebhookLimits, pending: [StoredCallEvent] = []) {
        self.limits = limits
        adopt(pending)
    }

    /// Stored events this machine did not emit (a restart's, a gone node's) join their calls' lines, waiting until
    /// their next attempt time; those already queued are skipped.
    private mutating func adopt(_ events: [StoredCallEvent]) {
        for event in events.sorted(by: { $0.seq < $1.seq }) {
            if let queue = queues[event.callId], queue.events.contains(where: { $0.seq == event.seq }) { continue }
            queues[event.callId, default: CallQueue(events: [], head: .waiting(until: event.nextAttemptAt))]
                .events.append(event)
            queuedCount += 1
        }
    }

    /// Undelivered events: being stored, waiting or being posted.
    package var pendingCount: Int { writingCount + queuedCount }

    /// Posts in flight.
    package var postingCount: Int { posting.count }

    /// When the earliest retry is due, if one waits.
    package var nextRetryAt: Int64? {
        queues.values.compactMap { if case .waiting(let until) = $0.head { until } else { nil } }.min()
    }

    /// The stored, undelivered event `seq`, as it stands now.
    package func queuedEvent(_ seq: Int64) -> StoredCallEvent? {
        posting[seq].flatMap { queues[$0] }?.events.first { $0.seq == seq }
            ?? queues.values.lazy.compactMap { $0.events.first { $0.seq == seq } }.first
    }

    /// Applies `input` at `now` (ms since 1970) and returns what to do.
    package mutating func handle(_ input: CallWebhookInput, now: Int64) -> [CallWebhookAction] {
        var actions: [CallWebhookAction] = []
        switch input {
        case .emitted(let event):
            guard pendingCount < limits.maxPendingEvents else {
                return [
                    .refuse(
                        event,
                        reason: "the call webhook queue is full (\(limits.maxPendingEvents) undelivered events)")
                ]
            }
            let emitted = EmittedCallEvent(event, emittedAt: now)
            writing[emitted.idempotencyKey, default: 0] += 1
            writingCount += 1
            return [.store(emitted)]
        case .stored(let event):
            guard finishWriting(event.idempotencyKey) else { return [] }
            enqueue(event)
        case .notStored(let key):
            _ = finishWriting(key)
            return []
        case .delivered(let seq):
            guard let callId = posting.removeValue(forKey: seq), var queue = queues[callId],
                queue.events.first?.seq == seq
            else { return [] }
            queue.events.removeFirst()
            queuedCount -= 1
            actions.append(.markDelivered(seq: seq, at: now))
            if queue.events.isEmpty {
                queues[callId] = nil
            } else {
                queue.head = .ready
                queues[callId] = queue
                readyCalls.append(callId)
            }
        case .failed(let seq, let problem, let jitter):
            guard let callId = posting.removeValue(forKey: seq), var queue = queues[callId],
                var event = queue.events.first, event.seq == seq
            else { return [] }
            event.attempts += 1
            event.nextAttemptAt = now + limits.retryDelay(afterAttempts: event.attempts, jitter: jitter)
            event.lastError = problem
            queue.events[0] = event
            queue.head = .waiting(until: event.nextAttemptAt)
            queues[callId] = queue
            actions.append(
                .recordFailure(seq: seq, attempts: event.attempts, retryAt: event.nextAttemptAt, problem: problem))
        case .adopted(let events):
            adopt(events)
            return []
        case .tick:
            let due = queues.compactMap { callId, queue -> (seq: Int64, callId: String)? in
                guard case .waiting(let until) = queue.head, until <= now, let first = queue.events.first else {
                    return nil
                }
                return (first.seq, callId)
            }
            for (_, callId) in due.sorted(by: { $0.seq < $1.seq }) {
                queues[callId]?.head = .ready
                readyCalls.append(callId)
            }
        }
        actions += startPosts()
        return actions
    }

    /// Takes one event with `key` off the events being stored; false if none was.
    private mutating func finishWriting(_ key: String) -> Bool {
        guard let count = writing[key] else { return false }
        writing[key] = count > 1 ? count - 1 : nil
        writingCount -= 1
        return true
    }

    /// A stored event joins its call's line; a call with nothing undelivered gets in line for a slot at once.
    private mutating func enqueue(_ event: StoredCallEvent) {
        queuedCount += 1
        if var queue = queues[event.callId] {
            queue.events.append(event)
            queues[event.callId] = queue
        } else {
            queues[event.callId] = CallQueue(events: [event], head: .ready)
            readyCalls.append(event.callId)
        }
    }

    /// Posts the heads of ready calls while slots are free.
    private mutating func startPosts() -> [CallWebhookAction] {
        var actions: [CallWebhookAction] = []
        while posting.count < limits.maxConcurrentDeliveries, readyStart < readyCalls.count {
            let callId = readyCalls[readyStart]
            readyStart += 1
            guard var queue = queues[callId], queue.head == .ready, let event = queue.events.first else { continue }
            queue.head = .posting(attempt: event.attempts + 1)
            queues[callId] = queue
            posting[event.seq] = callId
            actions.append(.post(event, attempt: event.attempts + 1))
        }
        // The line's consumed front is dropped now and then, so it does not grow without end.
        if readyStart > 1024, readyStart * 2 > readyCalls.count {
            readyCalls.removeFirst(readyStart)
            readyStart = 0
        }
        return actions
    }
}
