import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// A cluster node's ledger whose call's participants left it for other nodes while it lives (a caller's connection
/// dropped and came back through another node): their messages no longer pass here, so after the hand-off time the
/// call is handed to a node that has one of them, rather than ended as dropped (docs/scale-out.md).
@Suite struct CallLedgerHandOffTests {
    let caller = SessionID(1)
    /// The callee's sessions on node b, as this node knows them.
    let calleeOnB = SessionID.remote(node: "b", user: "2")
    let takeover = CallLedgerTakeoverTests()

    static func clusterLedger() -> CallLedgerMachine {
        var limits = LedgerLimits()
        limits.handOffMillis = 1_000
        return CallLedgerMachine(limits: limits)
    }

    func handOffs(_ actions: [LedgerAction]) -> [LiveCallSnapshot] {
        actions.compactMap { if case .handOff(let call) = $0 { call } else { nil } }
    }

    /// Node a: 1 calls 2 (on node b) from a session here; 2's accept arrives from b.
    func acceptedCall(_ ledger: inout CallLedgerMachine) {
        _ = takeover.relay(
            &ledger, 0, from: "1", caller, to: "2", extra: ",\"fromRoomId\":\"r1\"", .delivered([]), at: 1_000)
        _ = takeover.relay(&ledger, 2, from: "2", calleeOnB, to: "1", at: 2_000)
    }

    @Test func aCallWhoseOnlySessionHereClosedIsHandedOffAfterTheHandOffTime() {
        var ledger = Self.clusterLedger()
        acceptedCall(&ledger)
        #expect(ledger.handle(.sessionClosed(caller), now: 10_000).isEmpty)
        #expect(ledger.handle(.tick, now: 10_999).isEmpty)
        let actions = ledger.handle(.tick, now: 11_000)
        // Handed off, not ended: no record, no webhook event.
        #expect(takeover.records(actions).isEmpty && takeover.events(actions).isEmpty)
        let handed = handOffs(actions)
        #expect(handed.map(\.callId) == ["c1"])
        #expect(handed.first?.acceptedAt == 2_000 && handed.first?.rangAt == 1_000 && handed.first?.roomId == "r1")
        #expect(ledger.liveCallCount == 0 && ledger.busyCall(of: "2") == nil)
        // A repeat of its call message here starts nothing.
        _ = takeover.relay(&ledger, 0, from: "1", SessionID(3), to: "2", .delivered([]), at: 12_000)
        #expect(ledger.liveCallCount == 0)
    }

    @Test func theNodeThatTakesItOverEndsItByTheParticipantsMessages() {
        var a = Self.clusterLedger()
        acceptedCall(&a)
        _ = a.handle(.sessionClosed(caller), now: 10_000)
        let handed = handOffs(a.handle(.tick, now: 11_000))
        // Node b has the callee; the caller now sends through node c.
        var b = Self.clusterLedger()
        _ = b.handle(.adopted(AdoptedCalls(node: "a", calls: handed)), now: 12_000)
        _ = takeover.relay(&b, 21, from: "2", SessionID(7), to: "1", at: 13_000)
        let hungUp = takeover.relay(&b, 4, from: "1", .remote(node: "c", user: "1"), to: "2", at: 62_000)
        let record = takeover.records(hungUp).first
        #expect(record?.outcome == .completed && record?.endReason == "hangup" && record?.endedBy == "1")
        #expect(record?.acceptedAt == 2_000 && record?.durationMillis == 60_000)
        // And a's ledger, handed the call back (its callee reconnected to a), takes it again.
        _ = a.handle(.adopted(AdoptedCalls(node: "b", calls: handed)), now: 14_000)
        #expect(a.liveCallCount == 1)
    }

    @Test func aSessionHereAgainWithinTheHandOffTimeKeepsTheCall() {
        var ledger = Self.clusterLedger()
        acceptedCall(&ledger)
        _ = ledger.handle(.sessionClosed(caller), now: 10_000)
        _ = takeover.relay(&ledger, 21, from: "1", SessionID(4), to: "2", at: 10_500)
        #expect(handOffs(ledger.handle(.tick, now: 20_000)).isEmpty)
        #expect(ledger.liveCallCount == 1)
    }

    @Test func aCallWithEverySessionGoneIsNotHandedOffButEndsAsOnASingleServer() {
        var ledger = Self.clusterLedger()
        acceptedCall(&ledger)
        _ = ledger.handle(.sessionClosed(calleeOnB), now: 9_000)
        _ = ledger.handle(.sessionClosed(caller), now: 10_000)
        #expect(handOffs(ledger.handle(.tick, now: 11_000)).isEmpty)
        let ended = takeover.records(ledger.handle(.tick, now: 40_000))
        #expect(ended.map(\.endReason) == ["participantsGone"])
    }

    @Test func aSingleServerNeverHandsOff() {
        var ledger = CallLedgerMachine()
        acceptedCall(&ledger)
        _ = ledger.handle(.sessionClosed(caller), now: 10_000)
        #expect(handOffs(ledger.handle(.tick, now: 20_000)).isEmpty)
        #expect(ledger.liveCallCount == 1)
    }

    @Test func aCallTakenOverIsNotHandedOnBeforeASessionHereIsHeard() {
        var ledger = Self.clusterLedger()
        let snapshot = takeover.deadNodesCalls()
        _ = ledger.handle(.adopted(AdoptedCalls(node: "n1", calls: snapshot)), now: 10_000)
        #expect(handOffs(ledger.handle(.tick, now: 20_000)).isEmpty)
    }
}
