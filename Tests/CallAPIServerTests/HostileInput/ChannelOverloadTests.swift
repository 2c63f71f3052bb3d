import CallAPISignalProtocol
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// `/v1/rtc`'s overload policy: a rate limit like signaling's, and bounded outboxes, asserted on what the channel
/// state has queued.
@Suite struct ChannelOverloadTests {
    let now: Int64 = 1_800_000_000_000
    let alice = SessionID(1)
    let bob = SessionID(2)
    let data = String(repeating: "c", count: 5_000)

    func makeState(_ configure: (inout ChannelLimits) -> Void = { _ in }) -> ChannelState {
        var limits = ChannelLimits()
        limits.ratePerSecond = 1_000_000
        limits.burst = 1_000_000
        limits.maxOutboxFrames = 20
        limits.maxOutboxBytes = 50_000
        configure(&limits)
        var state = ChannelState(limits: limits)
        for (id, uid) in [(alice, UInt(1001)), (bob, UInt(1002))] {
            _ = state.handle(.connected(id), now: now)
            _ = state.handle(.frame(id, .join(.init(channel: "room", uid: uid, token: "t"))), now: now)
            _ = state.handle(
                .tokenChecked(
                    id, purpose: .join,
                    result: .valid(userId: String(uid), channel: "room", expiresAt: now + 3_600_000, issuedAt: now)),
                now: now)
        }
        return state
    }

    @Test func aMemberThatNeverReadsIsClosedAsASlowConsumerAndTheSenderIsTold() {
        var state = makeState()
        var peakBytes = 0
        var closes: [ChannelAction] = []
        var failures = 0
        for _ in 0..<100 {
            let actions = state.handle(.frame(alice, .signal(.init(to: 1002, data: data))), now: now)
            peakBytes = max(peakBytes, state.outbox(of: bob)?.bytes ?? 0)
            closes += actions.filter { if case .close = $0 { true } else { false } }
            for case .send(alice, .signalFailed) in actions { failures += 1 }
            _ = state.handle(.written(alice, frames: 100), now: now)
        }
        #expect(peakBytes <= 50_000)
        #expect(closes == [.close(bob, code: ChannelErrorCode.slowConsumer.closeCode)])
        #expect(failures >= 9)  // the signals bob was given and never got, then the ones to a uid no longer there
        #expect(state.members(of: "room") == [1001])
        #expect(state.queuedFrames == state.outbox(of: alice)?.frames)
    }

    @Test func aConnectionThatGoesBeforeItsJoinIsCheckedTakesItsQueuedFramesOutOfTheTotals() {
        var state = makeState()
        let carol = SessionID(3)
        let before = state.queuedFrames
        _ = state.handle(.connected(carol), now: now)
        _ = state.handle(.frame(carol, .join(.init(channel: "room2", uid: 1003, token: "t"))), now: now)
        // While the token is checked, another frame is answered with an error, queued for carol's writer.
        let early = state.handle(.frame(carol, .signal(.init(to: 1001, data: "x"))), now: now)
        #expect(early.contains { if case .send(carol, .error) = $0 { true } else { false } })
        #expect(state.queuedFrames == before + 1)
        _ = state.handle(.disconnected(carol), now: now)
        #expect(state.queuedFrames == before)
        #expect(state.connectionCount == 2)
    }

    @Test func aMemberThatReadsIsNeverClosed() {
        var state = makeState()
        _ = state.handle(.written(bob, frames: 1), now: now)  // `joined`
        for _ in 0..<1000 {
            _ = state.handle(.frame(alice, .signal(.init(to: 1002, data: data))), now: now)
            _ = state.handle(.written(bob, frames: 1), now: now)
        }
        #expect(state.members(of: "room") == [1001, 1002])
        #expect(state.outbox(of: bob)?.frames == 0)
    }

    @Test func signalsPastTheRateAreRefusedOnceThenTheFlooderIsRemoved() {
        var state = makeState {
            $0.ratePerSecond = 1
            $0.burst = 3
            $0.maxRefusalsInARow = 20
        }
        var refusals = 0
        var removed: [ChannelServerFrame.Failure] = []
        for _ in 0..<50 {
            let actions = state.handle(.frame(alice, .signal(.init(to: 1002, data: "x"))), now: now + 10)
            for case .send(alice, .error(let error)) in actions where error.errorCode == .rateLimited { refusals += 1 }
            for case .send(alice, .removed(let failure)) in actions { removed.append(failure) }
        }
        #expect(refusals == 1)
        #expect(removed.map(\.errorCode) == [.rateLimited])
        #expect(state.members(of: "room") == [1002])
    }
}
