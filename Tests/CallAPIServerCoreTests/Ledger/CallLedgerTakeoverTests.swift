import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// A cluster node's ledger publishing its calls in progress, and another node's taking them over when it dies.
@Suite struct CallLedgerTakeoverTests {
    let a = SessionID(1)
    let b = SessionID(2)

    func relay(
        _ machine: inout CallLedgerMachine, _ action: Int, callId: String = "c1", from: String, _ session: SessionID,
        to: String, extra: String = "", _ result: RelayResult = .delivered([]), at now: Int64
    ) -> [LedgerAction] {
        let body = CallLedgerMachineTests.message(action, callId: callId, extra: extra)
        return machine.handle(
            .relayed(RelayedSend(from: from, fromSession: session, to: to, body: body, result: result)), now: now)
    }

    func records(_ actions: [LedgerAction]) -> [CallRecord] {
        actions.compactMap { if case .save(let record) = $0 { record } else { nil } }
    }

    func events(_ actions: [LedgerAction]) -> [CallEvent.Kind] {
        actions.compactMap { if case .notify(let event) = $0 { event.kind } else { nil } }
    }

    /// The dead node's ledger: one call accepted, one still ringing.
    func deadNodesCalls() -> [LiveCallSnapshot] {
        var node1 = CallLedgerMachine()
        _ = relay(&node1, 0, from: "1", a, to: "2", extra: ",\"fromRoomId\":\"r1\"", .delivered([b]), at: 1000)
        _ = relay(&node1, 2, from: "2", b, to: "1", extra: ",\"deviceId\":\"d-b\"", at: 2000)
        _ = relay(&node1, 0, callId: "c2", from: "3", SessionID(5), to: "4", .delivered([SessionID(6)]), at: 3000)
        // A keep-alive of the accepted call does not change what is published.
        let published = node1.liveCallSnapshots
        _ = relay(&node1, 21, from: "1", a, to: "2", at: 4000)
        #expect(node1.liveCallSnapshots == published)
        return published
    }

    @Test func aNodePublishesEachCallInProgressWithWhatItsRecordNeeds() {
        let snapshots = deadNodesCalls()
        #expect(snapshots.map(\.callId) == ["c1", "c2"])
        let accepted = snapshots[0]
        #expect(accepted.caller == "1" && accepted.callee == "2" && accepted.roomId == "r1")
        #expect(accepted.rangAt == 1000 && accepted.acceptedAt == 2000 && accepted.lastHeard == 2000)
        #expect(accepted.devices.map(\.deviceId) == [nil, "d-b"])
        #expect(snapshots[1].rangAt == 3000 && snapshots[1].acceptedAt == nil)
    }

    @Test func takenOverCallsNobodyIsHeardInEndAsDroppedAfterTheLivenessWindowWithTheirReason() {
        var node2 = CallLedgerMachine()
        #expect(node2.handle(.adopted(AdoptedCalls(node: "n1", calls: deadNodesCalls())), now: 10_000).isEmpty)
        #expect(node2.liveCallCount == 2)
        // The accepted call's users are busy here now.
        #expect(node2.busyCall(of: "2") == "c1")
        #expect(node2.handle(.tick, now: 39_999).isEmpty)
        let ended = node2.handle(.tick, now: 40_000)
        let saved = records(ended)
        #expect(saved.map(\.callId) == ["c1", "c2"])
        #expect(saved.map(\.outcome) == [.dropped, .dropped])
        #expect(saved.map(\.endReason) == ["recordingNodeLost", "recordingNodeLost"])
        #expect(saved[0].acceptedAt == 2000 && saved[0].startedAt == 1000 && saved[0].durationMillis == 38_000)
        #expect(events(ended) == [.ended, .ended])
        #expect(node2.liveCallCount == 0)
        #expect(node2.busyCall(of: "2") == nil)
    }

    @Test func aTakenOverCallWhoseParticipantsAreHeardHereEndsByTheirMessages() {
        var node2 = CallLedgerMachine()
        _ = node2.handle(.adopted(AdoptedCalls(node: "n1", calls: deadNodesCalls())), now: 10_000)
        // The callee of the ringing call reconnected here and accepts; the caller hangs up from another node.
        let accepted = relay(&node2, 2, callId: "c2", from: "4", SessionID(9), to: "3", at: 11_000)
        #expect(events(accepted) == [.accepted, .connected])
        let callerElsewhere = SessionID.remote(node: "n3", user: "3")
        let hungUp = relay(&node2, 4, callId: "c2", from: "3", callerElsewhere, to: "4", at: 71_000)
        let record = records(hungUp).first
        #expect(record?.outcome == .completed)
        #expect(record?.acceptedAt == 11_000 && record?.rangAt == 3000 && record?.durationMillis == 60_000)
        #expect(record?.endedBy == "3")
    }

    @Test func aCallKnownHereOrEndedLatelyIsNotTakenOverAgain() {
        var node2 = CallLedgerMachine()
        let calls = deadNodesCalls()
        _ = node2.handle(.adopted(AdoptedCalls(node: "n1", calls: calls)), now: 10_000)
        _ = relay(&node2, 4, callId: "c1", from: "1", SessionID(7), to: "2", at: 12_000)
        #expect(node2.liveCallCount == 1)
        // The same rows taken again (a second sweep, a replay): c1 has ended, c2 is known.
        #expect(node2.handle(.adopted(AdoptedCalls(node: "n1", calls: calls)), now: 13_000).isEmpty)
        #expect(node2.liveCallCount == 1)
        #expect(node2.liveCallSnapshots.map(\.callId) == ["c2"])
    }

    @Test func takenOverCallsCountAgainstTheLiveCallLimit() {
        var node2 = CallLedgerMachine(limits: LedgerLimits(maxLiveCalls: 1))
        let ended = node2.handle(.adopted(AdoptedCalls(node: "n1", calls: deadNodesCalls())), now: 10_000)
        #expect(records(ended).map(\.endReason) == ["ledgerFull"])
        #expect(node2.liveCallCount == 1)
    }
}
