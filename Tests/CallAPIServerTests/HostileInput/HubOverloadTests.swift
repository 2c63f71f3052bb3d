import CallAPISignalProtocol
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The hub's overload policy, asserted on what it has queued (frames and bytes), not on memory or time.
@Suite struct HubOverloadTests {
    var hub: HubState
    let sender = SessionID(1)
    let reader = SessionID(2)
    let body = String(repeating: "x", count: 10_000)

    init() {
        var limits = HubLimits()
        limits.ratePerSecond = 1_000_000
        limits.burst = 1_000_000
        limits.maxOutboxFrames = 20
        limits.maxOutboxBytes = 100_000
        limits.maxRefusalsInARow = 50
        limits.idleTimeoutMillis = 3_600_000
        hub = HubState(limits: limits)
    }

    mutating func login(_ id: SessionID, _ user: String) {
        _ = hub.handle(.connected(id), now: 0)
        _ = hub.handle(.frame(id, .login(.init(id: 1, token: "t"))), now: 0)
        _ = hub.handle(
            .tokenChecked(id, requestId: 1, purpose: .login, result: .valid(userId: user, expiresAt: 3_600_000)), now: 0
        )
    }

    mutating func send(_ number: Int, from id: SessionID = SessionID(1), to user: String = "1002", ttl: Int? = nil)
        -> [HubAction]
    {
        hub.handle(.frame(id, .send(.init(id: number, to: user, body: body, ttl: ttl))), now: 1)
    }

    func answer(_ actions: [HubAction], to id: SessionID) -> ServerFrame.Answer? {
        for case .send(id, .answer(let answer)) in actions { return answer }
        return nil
    }

    @Test mutating func aReaderThatNeverReadsIsClosedAsASlowConsumerWithItsOutboxBounded() {
        login(sender, "1001")
        login(reader, "1002")
        var closes: [HubAction] = []
        var failed: [ServerFrame.HeldResult] = []
        var peakBytes = 0
        var peakFrames = 0
        for number in 0..<200 {
            let actions = send(number)
            if let outbox = hub.outbox(of: reader) {
                peakBytes = max(peakBytes, outbox.bytes)
                peakFrames = max(peakFrames, outbox.frames)
            }
            closes += actions.filter { if case .close = $0 { true } else { false } }
            for case .send(sender, .heldResult(let result)) in actions { failed.append(result) }
            _ = hub.handle(.written(sender, frames: 100), now: 1)  // the sender reads its answers
        }
        #expect(peakBytes <= 100_000)
        #expect(peakFrames <= 20)
        #expect(closes == [.close(reader, code: SignalCloseCode.slowConsumer, reason: .slowConsumer)])
        // Every message the reader was given but never wrote is reported failed to its sender…
        #expect(!failed.isEmpty)
        #expect(failed.allSatisfy { $0.result == .failed && $0.reason == .slowConsumer && $0.to == "1002" })
        // …and once it is gone, later sends fail as offline instead of queueing.
        #expect(answer(send(999), to: sender)?.reason == .peerOffline)
        #expect(hub.outbox(of: reader) == nil)
        #expect(hub.queuedFrames == hub.outbox(of: sender)?.frames)
    }

    @Test mutating func aReaderThatKeepsUpIsNeverClosed() {
        login(sender, "1001")
        login(reader, "1002")
        _ = hub.handle(.written(reader, frames: 1), now: 1)  // `welcome`
        for number in 0..<1000 {
            let actions = send(number)
            #expect(answer(actions, to: sender)?.result == .delivered)
            _ = hub.handle(.written(reader, frames: 1), now: 1)
            _ = hub.handle(.written(sender, frames: 1), now: 1)
        }
        #expect(hub.outbox(of: reader)?.frames == 0)
        #expect(hub.outbox(of: reader)?.bytes == 0)
    }

    @Test mutating func aSendToAUserWhoseOnlySessionIsFullFailsWithSlowConsumer() {
        login(sender, "1001")
        login(reader, "1002")
        var last: ServerFrame.Answer?
        for number in 0..<30 {
            last = answer(send(number), to: sender)
            _ = hub.handle(.written(sender, frames: 100), now: 1)
            if last?.result == .failed { break }
        }
        #expect(last?.result == .failed)
        #expect(last?.reason == .slowConsumer)
    }

    @Test mutating func aSendReachesTheSessionsThatKeepUpAndClosesOnlyTheFullOne() {
        let keepsUp = SessionID(3)
        login(sender, "1001")
        login(reader, "1002")
        login(keepsUp, "1002")
        var last: [HubAction] = []
        for number in 0..<30 {
            last = send(number)
            _ = hub.handle(.written(sender, frames: 100), now: 1)
            _ = hub.handle(.written(keepsUp, frames: 100), now: 1)
            if last.contains(.close(reader, code: SignalCloseCode.slowConsumer, reason: .slowConsumer)) { break }
        }
        #expect(last.contains(.close(reader, code: SignalCloseCode.slowConsumer, reason: .slowConsumer)))
        let messages = last.compactMap { action -> SessionID? in
            if case .send(let id, .message) = action { id } else { nil }
        }
        #expect(messages == [keepsUp])
        #expect(answer(last, to: sender)?.result == .delivered)
        #expect(answer(last, to: sender)?.sessions == 1)
    }

    @Test mutating func aSessionThatOverflowsMidEventGetsNoLaterFrameAndIsClosedAfterTheEventsOtherActions() {
        var limits = hub.limits
        limits.maxOutboxBytes = 25_000
        hub = HubState(limits: limits)
        login(sender, "1001")
        for number in 0..<5 {
            _ = send(number, ttl: 60)
            _ = hub.handle(.written(sender, frames: 100), now: 1)
        }
        // Logging in hands the reader its welcome and five held messages of 10 KB in one event: the welcome and two
        // of them fit.
        _ = hub.handle(.connected(reader), now: 2)
        _ = hub.handle(.frame(reader, .login(.init(id: 1, token: "t"))), now: 2)
        let actions = hub.handle(
            .tokenChecked(
                reader, requestId: 1, purpose: .login, result: .valid(userId: "1002", expiresAt: 3_600_000)), now: 2)
        let toReader = actions.compactMap { if case .send(reader, let frame) = $0 { frame } else { nil } }
        #expect(toReader.count == 3)
        guard case .welcome = toReader.first else {
            Issue.record("expected the welcome first, got \(toReader)")
            return
        }
        #expect(actions.last == .close(reader, code: SignalCloseCode.slowConsumer, reason: .slowConsumer))
        #expect(actions.filter { if case .close = $0 { true } else { false } }.count == 1)
        #expect(hub.outbox(of: reader) == nil)
        #expect(hub.queuedFrames == hub.outbox(of: sender)?.frames)
    }

    @Test mutating func refusalsToAFloodAreCoalescedAndTheFlooderIsClosed() {
        var limits = hub.limits
        limits.ratePerSecond = 1
        limits.burst = 5
        hub = HubState(limits: limits)
        login(sender, "1001")
        var refusals = 0
        var closed: [HubAction] = []
        for number in 0..<100 {
            let actions = hub.handle(.frame(sender, .ping(.init(id: number))), now: 10)
            for case .send(sender, .error(let error)) in actions where error.code == .rateLimited { refusals += 1 }
            closed += actions.filter { if case .close = $0 { true } else { false } }
            // Nothing is ever written: the refusals must not pile up in the outbox.
            #expect((hub.outbox(of: sender)?.frames ?? 0) <= 6)
        }
        #expect(refusals == 1)
        #expect(closed == [.close(sender, code: SignalCloseCode.rateLimited, reason: .rateLimited)])
    }

    @Test mutating func heldMessagesAreCappedPerSenderAndInTotalBytesAndCountedExactly() {
        var limits = hub.limits
        limits.maxHeldPerSender = 3
        limits.maxHeldBytes = 45_000
        hub = HubState(limits: limits)
        login(sender, "1001")
        let answers = (0..<5).map { answer(send($0, to: "u\($0)", ttl: 60), to: sender) }
        #expect(answers.prefix(3).allSatisfy { $0?.result == .queued })
        #expect(answers[3]?.reason == .queueFull)
        #expect(hub.heldCount == 3)
        #expect(hub.heldBytes == 30_000)
        // Another sender is capped by the total bytes.
        login(SessionID(3), "1003")
        #expect(answer(send(1, from: SessionID(3), to: "v1", ttl: 60), to: SessionID(3))?.result == .queued)
        #expect(answer(send(2, from: SessionID(3), to: "v2", ttl: 60), to: SessionID(3))?.reason == .queueFull)
        // Delivery and expiry uncount them.
        login(SessionID(4), "u0")
        #expect(hub.heldCount == 3)
        _ = hub.handle(.tick, now: 120_000)
        #expect(hub.heldCount == 0)
        #expect(hub.heldBytes == 0)
        #expect(answer(send(9, to: "u9", ttl: 60), to: sender)?.result == .queued)
    }

    @Test mutating func connectionsWaitingToLogInAreCapped() {
        var limits = hub.limits
        limits.maxUnauthenticated = 3
        hub = HubState(limits: limits)
        login(sender, "1001")
        for number in 10..<13 {
            #expect(hub.handle(.connected(SessionID(UInt64(number))), now: 0).isEmpty)
        }
        let refused = hub.handle(.connected(SessionID(13)), now: 0)
        #expect(refused.contains(.close(SessionID(13), code: SignalCloseCode.tryAgainLater, reason: .serverBusy)))
        // Logging in makes room.
        _ = hub.handle(.frame(SessionID(10), .login(.init(id: 1, token: "t"))), now: 0)
        _ = hub.handle(
            .tokenChecked(
                SessionID(10), requestId: 1, purpose: .login, result: .valid(userId: "1010", expiresAt: 3_600_000)),
            now: 0)
        #expect(hub.handle(.connected(SessionID(14)), now: 0).isEmpty)
    }
}
