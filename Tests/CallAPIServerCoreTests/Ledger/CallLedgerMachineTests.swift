import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// The ledger machine on its own: relayed call messages in, records out.
@Suite struct CallLedgerMachineTests {
    let a = SessionID(1)
    let b = SessionID(2)
    let b2 = SessionID(3)

    static func message(_ action: Int, callId: String = "c1", extra: String = "") -> String {
        "{\"message_action\":\(action),\"message_version\":\"1.0\",\"message_timestamp\":1,\"fromUserId\":1,"
            + "\"callId\":\"\(callId)\"\(extra)}"
    }

    func relay(
        _ machine: inout CallLedgerMachine, _ body: String, from: String, _ session: SessionID, to: String,
        _ result: RelayResult = .delivered([]), at now: Int64
    ) -> [LedgerAction] {
        machine.handle(
            .relayed(RelayedSend(from: from, fromSession: session, to: to, body: body, result: result)), now: now)
    }

    func saved(_ actions: [LedgerAction]) -> CallRecord? {
        actions.compactMap { if case .save(let record) = $0 { record } else { nil } }.first
    }

    @Test func acceptedThenHungUpIsCompletedWithItsDuration() {
        var machine = CallLedgerMachine()
        let ringing = relay(
            &machine, Self.message(0, extra: ",\"remoteUserId\":2,\"fromRoomId\":\"r1\""), from: "1", a, to: "2",
            .delivered([b]), at: 1000)
        #expect(
            ringing == [
                .notify(CallEvent(kind: .ringing, callId: "c1", caller: "1", callee: "2", at: 1000, outcome: nil))
            ])
        _ = relay(&machine, Self.message(2), from: "2", b, to: "1", at: 3000)
        #expect(machine.busyCall(of: "2") == "c1")
        let record = saved(
            relay(&machine, Self.message(4, extra: ",\"hangupReason\":\"bye\""), from: "1", a, to: "2", at: 63_000))
        #expect(record?.outcome == .completed)
        #expect(record?.durationMillis == 60_000)
        #expect(record?.endedBy == "1")
        #expect(record?.endReason == "bye")
        #expect(record?.roomId == "r1")
        #expect(record?.rangAt == 1000)
        #expect(record?.acceptedAt == 3000)
        #expect(machine.liveCallCount == 0)
        #expect(machine.busyCall(of: "2") == nil)
    }

    @Test func aCallBegunOnAnotherNodeIsNotRecordedHereButTheOtherSidesMessagesAdvanceOneBegunHere() {
        var machine = CallLedgerMachine()
        // The callee's node: the call message arrived from the caller's node.
        let elsewhere = SessionID.remote(node: "n1", user: "1")
        #expect(relay(&machine, Self.message(0, callId: "c9"), from: "1", elsewhere, to: "2", at: 1000).isEmpty)
        #expect(machine.liveCallCount == 0)

        // The caller's node: the callee's accept and hangup arrive from the callee's node.
        let callee = SessionID.remote(node: "n2", user: "2")
        _ = relay(&machine, Self.message(0), from: "1", a, to: "2", at: 1000)
        let accepted = relay(
            &machine, Self.message(2, extra: ",\"deviceId\":\"d-b\""), from: "2", callee, to: "1", at: 2000)
        #expect(
            accepted.map { action -> CallEvent.Kind? in if case .notify(let event) = action { event.kind } else { nil }
            }
                == [.accepted, .connected])
        #expect(machine.busyCall(of: "2") == "c1")
        let record = saved(relay(&machine, Self.message(4), from: "2", callee, to: "1", at: 5000))
        #expect(record?.outcome == .completed && record?.acceptedAt == 2000 && record?.endedBy == "2")
        #expect(record?.devices.map(\.userId) == ["1", "2"])
        #expect(record?.devices.last?.deviceId == "d-b")
    }

    @Test func aCallWhoseLocalAndRemoteSidesAreAllGoneIsDropped() {
        var machine = CallLedgerMachine()
        let callee = SessionID.remote(node: "n2", user: "2")
        _ = relay(&machine, Self.message(0), from: "1", a, to: "2", at: 1000)
        _ = relay(&machine, Self.message(2), from: "2", callee, to: "1", at: 2000)
        _ = machine.handle(.sessionClosed(a), now: 3000)
        #expect(machine.handle(.tick, now: 3000 + machine.limits.livenessMillis).isEmpty)  // the callee is still there
        _ = machine.handle(.sessionClosed(callee), now: 4000)
        let record = saved(machine.handle(.tick, now: 4000 + machine.limits.livenessMillis))
        #expect(record?.outcome == .dropped)
    }

    @Test func theCallersSettledNoticeAfterAnAcceptDoesNotEndTheCall() {
        var machine = CallLedgerMachine()
        _ = relay(&machine, Self.message(0), from: "1", a, to: "2", .delivered([b, b2]), at: 1000)
        _ = relay(&machine, Self.message(2, extra: ",\"deviceId\":\"d-b\""), from: "2", b, to: "1", at: 2000)
        // Our caller's notice to the callee's other devices: a cancel naming the device that accepted.
        let notice = relay(
            &machine, Self.message(1, extra: ",\"answeredByDevice\":\"d-b\""), from: "1", a, to: "2", at: 2100)
        #expect(saved(notice) == nil)
        #expect(machine.busyCall(of: "2") == "c1")
        let record = saved(relay(&machine, Self.message(4), from: "2", b, to: "1", at: 12_000))
        #expect(record?.outcome == .completed)
        #expect(record?.endedBy == "2")
        #expect(record?.durationMillis == 10_000)
    }

    @Test func aCancelWithoutADeviceNameAfterAnAcceptStillEndsTheCall() {
        var machine = CallLedgerMachine()
        _ = relay(&machine, Self.message(0), from: "1", a, to: "2", .delivered([b]), at: 1000)
        _ = relay(&machine, Self.message(2), from: "2", b, to: "1", at: 2000)
        let record = saved(relay(&machine, Self.message(1), from: "1", a, to: "2", at: 2500))
        #expect(record?.outcome == .completed)
        #expect(record?.endReason == "endedAfterAccept")
    }

    @Test func busyRejectIsMatchedByThePairWhateverItsCallId() {
        var machine = CallLedgerMachine()
        _ = relay(&machine, Self.message(0, callId: "new"), from: "1", a, to: "2", .delivered([b]), at: 1000)
        // The deployed clients stamp the busy reject with their own current call's id.
        let record = saved(
            relay(
                &machine, Self.message(3, callId: "other", extra: ",\"rejectByInternal\":1"), from: "2", b, to: "1",
                at: 1100))
        #expect(record?.callId == "new")
        #expect(record?.outcome == .busy)
    }

    @Test func aMessageAboutACallFromAThirdUserIsIgnored() {
        var machine = CallLedgerMachine()
        _ = relay(&machine, Self.message(0), from: "1", a, to: "2", .delivered([b]), at: 1000)
        #expect(relay(&machine, Self.message(1), from: "3", SessionID(9), to: "2", at: 1100).isEmpty)
        #expect(machine.liveCallCount == 1)
    }

    @Test func unknownFieldsAndActionsAndOtherTrafficAreTolerated() {
        var machine = CallLedgerMachine()
        #expect(relay(&machine, "hello", from: "1", a, to: "2", at: 1).isEmpty)
        #expect(relay(&machine, Self.message(99), from: "1", a, to: "2", at: 1).isEmpty)
        #expect(
            relay(
                &machine, "{\"message_action\":0,\"message_version\":\"2.0\",\"callId\":\"x\"}", from: "1", a, to: "2",
                at: 1
            ).isEmpty)
        let ringing = relay(
            &machine, Self.message(0, extra: ",\"deviceId\":\"phone\",\"future\":{\"x\":[1,2]}"), from: "1", a,
            to: "2", .delivered([b]), at: 1)
        #expect(ringing.count == 1)
    }

    @Test func acceptOnOneDeviceEndsTheOthersAsAnsweredElsewhere() {
        var machine = CallLedgerMachine()
        _ = relay(&machine, Self.message(0), from: "1", a, to: "2", .delivered([b, b2]), at: 1000)
        _ = relay(&machine, Self.message(2, extra: ",\"deviceId\":\"tablet\""), from: "2", b2, to: "1", at: 2000)
        let record = saved(relay(&machine, Self.message(4), from: "2", b2, to: "1", at: 5000))
        #expect(record?.outcome == .completed)
        #expect(record?.devices.map(\.ending) == ["completed", "answeredElsewhere", "completed"])
        #expect(record?.devices.last?.deviceId == "tablet")
    }

    @Test func aServerPlacedCallNeverMadeIsRecordedFailedUnlessItStarted() {
        var machine = CallLedgerMachine()
        let never = NotPlacedCall(
            callId: "p1", caller: "1", callee: "2", media: .video, matchId: "m1", reason: "notPlaced")
        let actions = machine.handle(.notPlaced(never), now: 7000)
        let record = saved(actions)
        #expect(record?.outcome == .failed)
        #expect(record?.endReason == "notPlaced")
        #expect(record?.devices.isEmpty == true)
        #expect(record?.startedAt == 7000 && record?.endedAt == 7000)
        #expect(
            actions.last
                == .notify(
                    CallEvent(
                        kind: .ended, callId: "p1", caller: "1", callee: "2", at: 7000, outcome: .failed,
                        endReason: "notPlaced")))
        // A call that did start under that id is left alone.
        _ = relay(&machine, Self.message(0, callId: "p2"), from: "1", a, to: "2", .delivered([b]), at: 8000)
        let late = NotPlacedCall(
            callId: "p2", caller: "1", callee: "2", media: .video, matchId: nil, reason: "notPlaced")
        #expect(machine.handle(.notPlaced(late), now: 9000).isEmpty)
        #expect(machine.liveCallCount == 1)
    }

    @Test func aCallThatEndedStaysEndedWhenItsMessagesComeLater() {
        var machine = CallLedgerMachine()
        let never = NotPlacedCall(
            callId: "p1", caller: "1", callee: "2", media: .video, matchId: nil, reason: "notPlaced")
        #expect(saved(machine.handle(.notPlaced(never), now: 7000))?.outcome == .failed)
        // The caller places it anyway, and the callee rejects: no ringing, no second ending.
        #expect(
            relay(&machine, Self.message(0, callId: "p1"), from: "1", a, to: "2", .delivered([b]), at: 9000).isEmpty)
        #expect(relay(&machine, Self.message(3, callId: "p1"), from: "2", b, to: "1", at: 9500).isEmpty)
        #expect(machine.liveCallCount == 0)
        // The same for a call that ended normally and is replayed.
        _ = relay(&machine, Self.message(0, callId: "c9"), from: "1", a, to: "2", .delivered([b]), at: 10_000)
        #expect(saved(relay(&machine, Self.message(1, callId: "c9"), from: "1", a, to: "2", at: 11_000)) != nil)
        #expect(
            relay(&machine, Self.message(0, callId: "c9"), from: "1", a, to: "2", .delivered([b]), at: 12_000).isEmpty)
        #expect(machine.liveCallCount == 0)
    }

    @Test func endedCallIdsAreRememberedForTheirWindowAndUpToTheirCount() {
        var machine = CallLedgerMachine(limits: LedgerLimits(rememberEndedMillis: 60_000, maxEndedCalls: 2))
        for (index, callId) in ["e1", "e2", "e3"].enumerated() {
            let never = NotPlacedCall(
                callId: callId, caller: "1", callee: "2", media: .video, matchId: nil, reason: "notPlaced")
            _ = machine.handle(.notPlaced(never), now: Int64(index) * 1000)
        }
        // Past the count, the oldest is forgotten: its id may start a call again.
        #expect(
            !relay(&machine, Self.message(0, callId: "e1"), from: "1", a, to: "2", .delivered([b]), at: 5000).isEmpty)
        #expect(
            relay(&machine, Self.message(0, callId: "e3"), from: "1", a, to: "2", .delivered([b]), at: 5000).isEmpty)
        // Past the window, every one is.
        _ = machine.handle(.tick, now: 62_001)
        #expect(
            !relay(&machine, Self.message(0, callId: "e3"), from: "1", a, to: "2", .delivered([b]), at: 62_001).isEmpty)
    }

    @Test func aCallWhoseSessionsAllCloseIsDroppedAfterTheLivenessWindow() {
        var machine = CallLedgerMachine(limits: LedgerLimits(livenessMillis: 30_000))
        _ = relay(&machine, Self.message(0), from: "1", a, to: "2", .delivered([b]), at: 1000)
        _ = relay(&machine, Self.message(2), from: "2", b, to: "1", at: 2000)
        _ = machine.handle(.sessionClosed(a), now: 3000)
        #expect(machine.handle(.tick, now: 40_000).isEmpty)  // the callee is still there
        _ = machine.handle(.sessionClosed(b), now: 50_000)
        #expect(machine.handle(.tick, now: 79_999).isEmpty)
        let record = saved(machine.handle(.tick, now: 80_000))
        #expect(record?.outcome == .dropped)
        #expect(record?.endedBy == nil)
        #expect(machine.busyCall(of: "1") == nil)
    }

    @Test func aReconnectedParticipantKeepsTheCallAlive() {
        var machine = CallLedgerMachine(limits: LedgerLimits(livenessMillis: 30_000))
        _ = relay(&machine, Self.message(0), from: "1", a, to: "2", .delivered([b]), at: 1000)
        _ = relay(&machine, Self.message(2), from: "2", b, to: "1", at: 2000)
        _ = machine.handle(.sessionClosed(a), now: 3000)
        _ = machine.handle(.sessionClosed(b), now: 3000)
        _ = relay(&machine, Self.message(21), from: "1", SessionID(7), to: "2", at: 10_000)  // keep-alive, new session
        #expect(machine.handle(.tick, now: 100_000).isEmpty)
        #expect(machine.liveCallCount == 1)
    }

    @Test func liveCallsAreCappedByEndingTheOldest() {
        var machine = CallLedgerMachine(limits: LedgerLimits(maxLiveCalls: 2))
        _ = relay(&machine, Self.message(0, callId: "x1"), from: "1", a, to: "2", .delivered([b]), at: 1)
        _ = relay(&machine, Self.message(0, callId: "x2"), from: "3", SessionID(5), to: "4", .delivered([]), at: 2)
        let record = saved(relay(&machine, Self.message(0, callId: "x3"), from: "5", SessionID(6), to: "6", at: 3))
        #expect(record?.callId == "x1")
        #expect(record?.endReason == "ledgerFull")
        #expect(machine.liveCallCount == 2)
    }

    @Test(arguments: [
        (RelayResult.offline, CallOutcome.missed, "calleeOffline"),
        (RelayResult.failed("invalid_target"), CallOutcome.failed, "notDelivered:invalid_target"),
        (RelayResult.answeredBusy, CallOutcome.busy, "serverBusy"),
    ])
    func aCallThatIsNotDeliveredEndsAtOnce(result: RelayResult, outcome: CallOutcome, reason: String) {
        var machine = CallLedgerMachine()
        let record = saved(relay(&machine, Self.message(10), from: "1", a, to: "2", result, at: 5))
        #expect(record?.outcome == outcome)
        #expect(record?.endReason == reason)
        #expect(record?.media == .audio)
        #expect(record?.rangAt == nil)
    }

    @Test func anUnansweredCallWithNoMessagesEndsAsMissedAfterTheRingTimeout() {
        var machine = CallLedgerMachine(limits: LedgerLimits(ringTimeoutMillis: 60_000))
        _ = relay(&machine, Self.message(0), from: "1", a, to: "2", .queued, at: 0)
        #expect(machine.handle(.tick, now: 59_999).isEmpty)
        let actions = machine.handle(.tick, now: 60_000)
        #expect(saved(actions)?.outcome == .missed)
        #expect(saved(actions)?.endReason == "noAnswer")
        // Both sides are told first, then the record and the events, which say the server ended it.
        #expect(actions.first == .endRing(AbandonedRing(callId: "c1", caller: "1", callee: "2")))
        #expect(
            actions.contains(
                .notify(
                    CallEvent(
                        kind: .missed, callId: "c1", caller: "1", callee: "2", at: 60_000, outcome: .missed,
                        endReason: "noAnswer", serverEnded: true))))
    }

    @Test func theCancelsThatEndAnAbandonedRingComeFromEachSideToTheOtherAsATimedOutRingsCancel() throws {
        let ring = AbandonedRing(callId: "c1", caller: "1001", callee: "1002")
        let cancels = ring.cancels(now: 5)
        #expect(cancels.map(\.from) == ["1001", "1002"])
        #expect(cancels.map(\.to) == ["1002", "1001"])
        for cancel in cancels {
            let fields = try #require(CallMessageFields.parse(cancel.body))
            #expect(fields.callId == "c1")
            #expect(fields.action == .cancel(byTimer: true))
            #expect(cancel.body.contains("\"fromUserId\":\(cancel.from)"))
        }
        // A side whose peer has no CallAPI user id cannot be written a message from it.
        #expect(AbandonedRing(callId: "c2", caller: "alice", callee: "1002").cancels(now: 5).map(\.to) == ["alice"])
    }

    @Test func aRingStillHeardFromIsNotEndedByTheServer() {
        var machine = CallLedgerMachine(limits: LedgerLimits(ringTimeoutMillis: 60_000))
        _ = relay(&machine, Self.message(0), from: "1", a, to: "2", .delivered([b]), at: 0)
        // The caller's keep-alive at 50 s counts as the call being spoken of.
        _ = relay(&machine, Self.message(21), from: "1", a, to: "2", .delivered([b]), at: 50_000)
        #expect(machine.handle(.tick, now: 100_000).isEmpty)
        #expect(
            machine.handle(.tick, now: 110_000).first == .endRing(AbandonedRing(callId: "c1", caller: "1", callee: "2"))
        )
    }
}
