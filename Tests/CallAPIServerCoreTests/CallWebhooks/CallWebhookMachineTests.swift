import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// The delivery machine on its own: order per call, concurrency, retries on a schedule, the bounded queue, restarts.
@Suite struct CallWebhookMachineTests {
    static func event(_ kind: CallEvent.Kind, _ callId: String, at: Int64 = 0) -> CallEvent {
        CallEvent(
            kind: kind, callId: callId, caller: "1001", callee: "1002", at: at,
            outcome: kind == .ended ? .completed : nil)
    }

    /// Emits `event` and stores it as the store would, with the next of `numbers`; returns the actions of the
    /// store report.
    static func emitAndStore(
        _ machine: inout CallWebhookMachine, _ numbers: inout Int64, _ event: CallEvent, now: Int64 = 0
    ) -> (stored: StoredCallEvent, actions: [CallWebhookAction]) {
        guard case .store(let emitted) = machine.handle(.emitted(event), now: now).first else {
            Issue.record("no store action")
            return (StoredCallEvent(event, seq: 0, now: now), [])
        }
        numbers += 1
        let stored = emitted.numbered(numbers)
        return (stored, machine.handle(.stored(stored), now: now))
    }

    @Test func aCallsLaterEventWaitsUntilItsEarlierOneIsDelivered() {
        var machine = CallWebhookMachine(limits: CallWebhookLimits())
        var numbers: Int64 = 0
        let ringing = Self.emitAndStore(&machine, &numbers, Self.event(.ringing, "A"))
        #expect(ringing.actions == [.post(ringing.stored, attempt: 1)])
        let accepted = Self.emitAndStore(&machine, &numbers, Self.event(.accepted, "A"))
        #expect(accepted.actions == [])
        #expect(
            machine.handle(.delivered(seq: ringing.stored.seq), now: 5) == [
                .markDelivered(seq: ringing.stored.seq, at: 5), .post(accepted.stored, attempt: 1),
            ])
        #expect(accepted.stored.seq == ringing.stored.seq + 1)
    }

    @Test func aFailingCallDoesNotBlockAnotherCall() {
        var machine = CallWebhookMachine(limits: CallWebhookLimits())
        var numbers: Int64 = 0
        let a = Self.emitAndStore(&machine, &numbers, Self.event(.ringing, "A"))
        _ = machine.handle(.failed(seq: a.stored.seq, problem: "down", jitter: 1), now: 0)
        let b = Self.emitAndStore(&machine, &numbers, Self.event(.ringing, "B"))
        #expect(b.actions == [.post(b.stored, attempt: 1)])
    }

    @Test func postsInFlightAreBoundedAcrossCalls() {
        var machine = CallWebhookMachine(limits: CallWebhookLimits(maxConcurrentDeliveries: 2))
        var numbers: Int64 = 0
        let posts = ["A", "B", "C"].map { Self.emitAndStore(&machine, &numbers, Self.event(.ringing, $0)) }
        #expect(posts.map(\.actions.count) == [1, 1, 0])
        #expect(machine.postingCount == 2)
        #expect(
            machine.handle(.delivered(seq: posts[0].stored.seq), now: 1) == [
                .markDelivered(seq: posts[0].stored.seq, at: 1), .post(posts[2].stored, attempt: 1),
            ])
    }

    @Test func aRetryPostsTheSameEventWithTheSameIdempotencyKeyAndBody() {
        var machine = CallWebhookMachine(limits: CallWebhookLimits(retryBaseMillis: 1000))
        var numbers: Int64 = 0
        let first = Self.emitAndStore(&machine, &numbers, Self.event(.ended, "A"))
        #expect(
            machine.handle(.failed(seq: first.stored.seq, problem: "the receiver answered 503", jitter: 1), now: 0)
                == [
                    .recordFailure(
                        seq: first.stored.seq, attempts: 1, retryAt: 1000, problem: "the receiver answered 503")
                ])
        let actions = machine.handle(.tick, now: 1000)
        guard case .post(let again, let attempt) = actions.first else {
            Issue.record("no retry: \(actions)")
            return
        }
        #expect(attempt == 2)
        #expect(again.idempotencyKey == first.stored.idempotencyKey)
        #expect(again.idempotencyKey == "A:ended")
        #expect(again.body == first.stored.body)
        #expect(again.seq == first.stored.seq)
    }

    @Test func retriesFollowTheCappedExponentialScheduleOnTheClock() {
        var machine = CallWebhookMachine(limits: CallWebhookLimits(retryBaseMillis: 1000, retryCapMillis: 8000))
        var numbers: Int64 = 0
        let stored = Self.emitAndStore(&machine, &numbers, Self.event(.ringing, "A")).stored
        var now: Int64 = 0
        var waits: [Int64] = []
        for attempt in 1...6 {
            _ = machine.handle(.failed(seq: stored.seq, problem: "down", jitter: 1), now: now)
            let due = try! #require(machine.nextRetryAt)
            waits.append(due - now)
            #expect(machine.handle(.tick, now: due - 1) == [], "attempt \(attempt + 1) started early")
            #expect(machine.handle(.tick, now: due) == [.post(machine.queuedEvent(stored.seq)!, attempt: attempt + 1)])
            now = due
        }
        #expect(waits == [1000, 2000, 4000, 8000, 8000, 8000])
    }

    @Test func jitterShortensADelayToBetweenHalfAndAll() {
        let limits = CallWebhookLimits(retryBaseMillis: 1000, retryCapMillis: 60_000)
        #expect(limits.retryDelay(afterAttempts: 3, jitter: 0) == 2000)
        #expect(limits.retryDelay(afterAttempts: 3, jitter: 0.5) == 3000)
        #expect(limits.retryDelay(afterAttempts: 3, jitter: 1) == 4000)
        #expect(limits.retryDelay(afterAttempts: 200, jitter: 1) == 60_000)
        #expect(limits.retryDelay(afterAttempts: 1, jitter: .nan) == 1000)
    }

    @Test func aFullQueueRefusesNewEventsUntilOneIsDelivered() {
        var machine = CallWebhookMachine(limits: CallWebhookLimits(maxPendingEvents: 2))
        var numbers: Int64 = 0
        let a = Self.emitAndStore(&machine, &numbers, Self.event(.ringing, "A"))
        _ = Self.emitAndStore(&machine, &numbers, Self.event(.ringing, "B"))
        let refused = machine.handle(.emitted(Self.event(.ringing, "C")), now: 0)
        guard case .refuse(let event, let reason) = refused.first, refused.count == 1 else {
            Issue.record("not refused: \(refused)")
            return
        }
        #expect(event.callId == "C")
        #expect(reason.contains("full"))
        _ = machine.handle(.delivered(seq: a.stored.seq), now: 0)
        guard case .store(let stored) = machine.handle(.emitted(Self.event(.ringing, "C")), now: 0).first else {
            Issue.record("still refused")
            return
        }
        #expect(stored.event.callId == "C")
        #expect(machine.pendingCount == 2)
    }

    @Test func aRestartedMachineResumesStoredEventsInOrderAndHandsNewOnesToTheStore() {
        let pending = [
            StoredCallEvent(Self.event(.accepted, "A"), seq: 8, now: 0),
            StoredCallEvent(Self.event(.ringing, "A"), seq: 7, now: 0),
        ]
        var machine = CallWebhookMachine(limits: CallWebhookLimits(), pending: pending)
        #expect(machine.pendingCount == 2)
        #expect(machine.handle(.tick, now: 0) == [.post(pending[1], attempt: 1)])
        // The store numbers it (CallWebhookStoreTests: after the highest number in the table).
        #expect(
            machine.handle(.emitted(Self.event(.ringing, "B")), now: 5) == [
                .store(EmittedCallEvent(Self.event(.ringing, "B"), emittedAt: 5))
            ])
        #expect(machine.pendingCount == 3)
    }

    @Test func eventsTakenOverFromAnotherNodeArePostedWhenDueAndOnlyOnce() {
        var machine = CallWebhookMachine(limits: CallWebhookLimits())
        var ringing = StoredCallEvent(Self.event(.ringing, "X"), seq: 4, now: 0)
        ringing.nextAttemptAt = 2_000
        let accepted = StoredCallEvent(Self.event(.accepted, "X"), seq: 5, now: 0)
        #expect(machine.handle(.adopted([accepted, ringing]), now: 1_000) == [])
        #expect(machine.handle(.adopted([ringing]), now: 1_000) == [])
        #expect(machine.pendingCount == 2)
        #expect(machine.handle(.tick, now: 1_999) == [])
        #expect(machine.handle(.tick, now: 2_000) == [.post(ringing, attempt: 1)])
        #expect(
            machine.handle(.delivered(seq: 4), now: 2_001) == [
                .markDelivered(seq: 4, at: 2_001), .post(accepted, attempt: 1),
            ])
    }

    @Test func twoEventsUnderOneKeyBeingStoredAreCountedApart() {
        var machine = CallWebhookMachine(limits: CallWebhookLimits())
        let event = Self.event(.ended, "A")
        _ = machine.handle(.emitted(event), now: 0)
        _ = machine.handle(.emitted(event), now: 0)
        #expect(machine.pendingCount == 2)
        // The store took the first and refused the second (its key was used): nothing stays counted.
        #expect(machine.handle(.stored(StoredCallEvent(event, seq: 1, now: 0)), now: 0).count == 1)
        #expect(machine.handle(.notStored(key: "A:ended"), now: 0) == [])
        #expect(machine.pendingCount == 1)
        #expect(machine.handle(.notStored(key: "A:ended"), now: 0) == [])
        #expect(machine.pendingCount == 1)
    }

    @Test func anEventTheStoreCannotTakeIsGivenUpAndFreesItsPlace() {
        var machine = CallWebhookMachine(limits: CallWebhookLimits(maxPendingEvents: 1))
        guard case .store(let emitted) = machine.handle(.emitted(Self.event(.ringing, "A")), now: 0).first else {
            Issue.record("not stored")
            return
        }
        #expect(machine.handle(.notStored(key: emitted.idempotencyKey), now: 0) == [])
        #expect(machine.pendingCount == 0)
    }

    @Test func theBodyCarriesTheKeyTheSequenceAndTheOutcome() {
        let stored = StoredCallEvent(Self.event(.ended, "C-1", at: 42), seq: 3, now: 42)
        #expect(
            stored.body
                == "{\"at\":42,\"callId\":\"C-1\",\"callee\":\"1002\",\"caller\":\"1001\",\"event\":\"ended\","
                + "\"idempotencyKey\":\"C-1:ended\",\"outcome\":\"completed\",\"seq\":3}")
    }
}
