import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// The match queue and server-placed calls, driven directly with explicit times (docs/match.md).
@Suite struct MatchMachineTests {
    var machine = MatchMachine(limits: MatchLimits(), idPrefix: "t")
    let start: Int64 = 1_000_000
    let alice = SessionID(1)
    let bob = SessionID(2)
    let carol = SessionID(3)
    let dave = SessionID(4)
    let aliceTablet = SessionID(5)

    mutating func enter(_ session: SessionID, _ user: String, _ tags: [String], at offset: Int64 = 0)
        -> [MatchAction]
    {
        machine.handle(.enter(session, user: user, .init(id: 7, tags: tags)), now: start + offset)
    }

    func frames(_ actions: [MatchAction], to id: SessionID) -> [ServerFrame] {
        actions.compactMap { if case .send(id, let frame) = $0 { frame } else { nil } }
    }

    func matched(_ actions: [MatchAction], to id: SessionID) -> ServerFrame.Matched? {
        frames(actions, to: id).lazy.compactMap { if case .matched(let m) = $0 { m } else { nil } }.first
    }

    func placeCall(_ actions: [MatchAction], to id: SessionID) -> ServerFrame.PlaceCall? {
        frames(actions, to: id).lazy.compactMap { if case .placeCall(let p) = $0 { p } else { nil } }.first
    }

    func notPlaced(_ actions: [MatchAction]) -> [NotPlacedCall] {
        actions.compactMap { if case .callNotPlaced(let call) = $0 { call } else { nil } }
    }

    func errorCode(_ actions: [MatchAction], to id: SessionID) -> SignalErrorCode? {
        frames(actions, to: id).lazy.compactMap { if case .error(let e) = $0 { e.code } else { nil } }.first
    }

    @Test mutating func aLoneEntrantWaitsAndIsAcknowledgedWithItsTags() {
        let actions = enter(alice, "1001", ["paris", "chess"])
        #expect(actions == [.send(alice, .matchQueue(.init(id: 7, waiting: true, tags: ["paris", "chess"])))])
        #expect(machine.waitingCount == 1)
        #expect(machine.tags(of: "1001") == ["paris", "chess"])
    }

    @Test mutating func theLongerWaitingUserIsMatchedAndPlacesTheCall() {
        _ = enter(alice, "1001", ["paris"])
        let actions = enter(bob, "1002", ["paris"], at: 1_000)
        let aliceMatch = matched(actions, to: alice)
        let bobMatch = matched(actions, to: bob)
        #expect(aliceMatch?.role == .caller)
        #expect(aliceMatch?.peer == "1002")
        #expect(bobMatch?.role == .callee)
        #expect(bobMatch?.peer == "1001")
        #expect(aliceMatch?.tag == "paris")
        #expect(aliceMatch?.callId == bobMatch?.callId)
        #expect(aliceMatch?.matchId == "match-t-1")
        // The ack, both matched frames, then the instruction to the caller, in that order.
        #expect(actions.count == 4)
        #expect(
            actions.last
                == .send(
                    alice,
                    .placeCall(
                        .init(callId: "call-t-1", callee: "1002", video: true, matchId: "match-t-1", tag: "paris"))))
        #expect(placeCall(actions, to: bob) == nil)
        #expect(machine.waitingCount == 0)
        #expect(machine.awaitsCall(from: "1001"))
    }

    @Test mutating func aMatchedPairLeavesTheQueueAndTheNextEntrantWaits() {
        _ = enter(alice, "1001", ["paris"])
        _ = enter(carol, "1003", ["paris", "rome"], at: 10)
        #expect(machine.waitingCount == 0, "carol shares paris with alice: they pair at once")
        let actions = enter(dave, "1004", ["paris"], at: 20)
        #expect(matched(actions, to: dave) == nil)
        #expect(machine.waitingCount == 1)
        let next = enter(bob, "1002", ["paris"], at: 30)
        #expect(matched(next, to: bob)?.peer == "1004")
        #expect(matched(next, to: bob)?.matchId == "match-t-2")
    }

    @Test mutating func aNewcomerWithSeveralTagsPairsWithTheEarliestUserSharingAny() {
        _ = enter(alice, "1001", ["chess"])
        _ = enter(bob, "1002", ["paris"], at: 10)
        let actions = enter(carol, "1003", ["paris", "chess"], at: 20)
        // Alice waited longer than bob, though carol lists paris first.
        #expect(matched(actions, to: carol)?.peer == "1001")
        #expect(matched(actions, to: carol)?.tag == "chess")
        #expect(machine.tags(of: "1002") == ["paris"])
    }

    @Test mutating func usersWithoutACommonTagKeepWaiting() {
        _ = enter(alice, "1001", ["paris"])
        let actions = enter(bob, "1002", ["rome"], at: 10)
        #expect(matched(actions, to: bob) == nil)
        #expect(machine.waitingCount == 2)
    }

    @Test mutating func leavingTakesTheUserOutOfTheQueue() {
        _ = enter(alice, "1001", ["paris"])
        let left = machine.handle(.leave(alice, user: "1001", .init(id: 9)), now: start)
        #expect(left == [.send(alice, .matchQueue(.init(id: 9, waiting: false, tags: [])))])
        let actions = enter(bob, "1002", ["paris"], at: 10)
        #expect(matched(actions, to: bob) == nil)
        #expect(machine.waitingCount == 1)
    }

    @Test mutating func aUserWhoseSessionClosesLeavesTheQueue() {
        _ = enter(alice, "1001", ["paris"])
        #expect(machine.handle(.sessionClosed(alice), now: start).isEmpty)
        let actions = enter(bob, "1002", ["paris"], at: 10)
        #expect(matched(actions, to: bob) == nil)
        #expect(machine.tags(of: "1001") == nil)
    }

    @Test mutating func aFullQueueRefusesWithAClearError() {
        var limits = MatchLimits()
        limits.maxWaiting = 2
        machine = MatchMachine(limits: limits, idPrefix: "t")
        _ = enter(alice, "1001", ["a"])
        _ = enter(bob, "1002", ["b"])
        let refused = enter(carol, "1003", ["c"])
        #expect(errorCode(refused, to: carol) == .matchQueueFull)
        #expect(machine.waitingCount == 2)
        // A waiting user may still change its tags.
        #expect(errorCode(enter(alice, "1001", ["z"]), to: alice) == nil)
    }

    @Test mutating func badTagsAreRefused() {
        #expect(errorCode(enter(alice, "1001", []), to: alice) == .invalidFrame)
        #expect(errorCode(enter(alice, "1001", ["x", "x"]), to: alice) == .invalidFrame)
        #expect(errorCode(enter(alice, "1001", [String(repeating: "a", count: 65)]), to: alice) == .invalidFrame)
        #expect(errorCode(enter(alice, "1001", (0..<9).map { "t\($0)" }), to: alice) == .invalidFrame)
        #expect(errorCode(enter(alice, "1001", ["a\nb"]), to: alice) == .invalidFrame)
        #expect(machine.waitingCount == 0)
    }

    @Test mutating func aUserIsNeverMatchedWithItselfNorWithItsOtherDevice() {
        _ = enter(alice, "1001", ["paris"])
        let again = enter(aliceTablet, "1001", ["paris"], at: 10)
        #expect(matched(again, to: aliceTablet) == nil)
        #expect(matched(again, to: alice) == nil)
        #expect(machine.waitingCount == 1)
    }

    @Test mutating func aSecondDeviceTakesOverTheEntryAndKeepsItsPlaceInLine() {
        _ = enter(alice, "1001", ["paris"])
        _ = enter(carol, "1003", ["rome"], at: 5)
        _ = enter(aliceTablet, "1001", ["rome"], at: 10)
        // Alice (entered first, now on her tablet) pairs with carol and, having waited longer, places the call.
        #expect(machine.waitingCount == 0)
        _ = enter(bob, "1002", ["paris"], at: 20)
        #expect(machine.waitingCount == 1)
        // The old session closing no longer matters; the tablet's would have.
        #expect(machine.handle(.sessionClosed(alice), now: start + 30).isEmpty)
    }

    @Test mutating func theTabletThatTookOverHearsOfTheMatch() {
        _ = enter(alice, "1001", ["paris"])
        _ = enter(aliceTablet, "1001", ["paris", "rome"], at: 10)
        let actions = enter(bob, "1002", ["rome"], at: 20)
        #expect(matched(actions, to: aliceTablet)?.role == .caller)
        #expect(placeCall(actions, to: aliceTablet) != nil)
        #expect(frames(actions, to: alice).isEmpty)
    }

    @Test mutating func aPlacedCallSeenInTimeIsSettled() {
        let order = PlaceCallOrder(caller: "1001", callee: "1002", media: .audio)
        let actions = machine.handle(.place(order, callId: "c-1", callerSession: alice), now: start)
        #expect(actions == [.send(alice, .placeCall(.init(callId: "c-1", callee: "1002", video: false)))])
        #expect(machine.awaitsCall(from: "1001"))
        // A call message to someone else, or with another id, does not settle it.
        _ = machine.handle(.callSent(from: "1001", to: "1003", callId: "c-1"), now: start + 100)
        _ = machine.handle(.callSent(from: "1001", to: "1002", callId: "c-2"), now: start + 100)
        #expect(machine.awaitsCall(from: "1001"))
        _ = machine.handle(.callSent(from: "1001", to: "1002", callId: "c-1"), now: start + 200)
        #expect(!machine.awaitsCall(from: "1001"))
        #expect(notPlaced(machine.handle(.tick, now: start + 60_000)).isEmpty)
    }

    @Test mutating func aPlacedCallNotSeenWithinTheWindowIsGivenUp() {
        let order = PlaceCallOrder(caller: "1001", callee: "1002", media: .video)
        _ = machine.handle(.place(order, callId: "c-1", callerSession: alice), now: start)
        #expect(notPlaced(machine.handle(.tick, now: start + 4_999)).isEmpty)
        let given = notPlaced(machine.handle(.tick, now: start + 5_000))
        #expect(
            given == [
                NotPlacedCall(
                    callId: "c-1", caller: "1001", callee: "1002", media: .video, matchId: nil, reason: "notPlaced")
            ])
        #expect(!machine.awaitsCall(from: "1001"))
    }

    @Test mutating func aMatchedCallWhoseCallerLeavesIsGivenUpAtOnce() {
        _ = enter(alice, "1001", ["paris"])
        _ = enter(bob, "1002", ["paris"], at: 10)
        let given = notPlaced(machine.handle(.sessionClosed(alice), now: start + 20))
        #expect(given.map(\.reason) == ["callerGone"])
        #expect(given.first?.matchId == "match-t-1")
    }

    @Test mutating func pendingPlacementsAreBounded() {
        var limits = MatchLimits()
        limits.maxPendingPlacements = 1
        machine = MatchMachine(limits: limits, idPrefix: "t")
        let order = PlaceCallOrder(caller: "1001", callee: "1002", media: .video)
        _ = machine.handle(.place(order, callId: "c-1", callerSession: alice), now: start)
        let second = machine.handle(.place(order, callId: "c-2", callerSession: alice), now: start + 1)
        #expect(notPlaced(second).map(\.callId) == ["c-1"])
        #expect(notPlaced(second).first?.reason == "placementsFull")
        #expect(placeCall(second, to: alice)?.callId == "c-2")
    }
}
