import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// Server-placed calls and the match queue inside the hub: frames routed to the machine, the hub's presence checks,
/// and the caller's call message settling a placement (docs/match.md).
@Suite struct MatchHubTests {
    var hub = HubState(limits: HubLimits(), runId: "h")
    let alicePhone = SessionID(1)
    let aliceTablet = SessionID(2)
    let bob = SessionID(3)

    mutating func login(_ id: SessionID, _ user: String, now: Int64 = 0) {
        hub.logIn(id, as: user, now: now)
    }

    func frames(_ actions: [HubAction], to id: SessionID) -> [ServerFrame] {
        actions.compactMap { if case .send(id, let frame) = $0 { frame } else { nil } }
    }

    static func callMessage(_ callId: String) -> String {
        "{\"message_action\":0,\"message_version\":\"1.0\",\"message_timestamp\":1,\"fromUserId\":1001,"
            + "\"callId\":\"\(callId)\",\"remoteUserId\":1002}"
    }

    @Test mutating func matchFramesNeedALogin() {
        _ = hub.handle(.connected(alicePhone), now: 0)
        let actions = hub.handle(.frame(alicePhone, .matchEnter(.init(id: 4, tags: ["paris"]))), now: 1)
        guard case .error(let error) = frames(actions, to: alicePhone).first else {
            Issue.record("no error in \(actions)")
            return
        }
        #expect(error.code == .notLoggedIn)
        #expect(hub.matchWaitingCount == 0)
    }

    @Test mutating func placingNeedsBothUsersOnlineAndTwoDifferentUsers() {
        login(alicePhone, "1001")
        #expect(
            hub.placementProblem(.init(caller: "1001", callee: "1002", media: .video)) == .offline(user: "1002"))
        #expect(
            hub.placementProblem(.init(caller: "1003", callee: "1001", media: .video)) == .offline(user: "1003"))
        #expect(hub.placementProblem(.init(caller: "1001", callee: "1001", media: .video)) == .sameUser)
        let order = PlaceCallOrder(caller: "1001", callee: "1002", media: .video)
        #expect(hub.handle(.placeCall(order, callId: "c-1"), now: 5).isEmpty)
        #expect(!hub.awaitsPlacement(of: "c-1"))
    }

    @Test mutating func aPlacedCallGoesToTheCallersNewestSessionAndItsCallMessageSettlesIt() {
        login(alicePhone, "1001")
        login(aliceTablet, "1001", now: 1)
        login(bob, "1002")
        let order = PlaceCallOrder(caller: "1001", callee: "1002", media: .video)
        let actions = hub.handle(.placeCall(order, callId: "c-1"), now: 5)
        #expect(frames(actions, to: aliceTablet) == [.placeCall(.init(callId: "c-1", callee: "1002", video: true))])
        #expect(frames(actions, to: alicePhone).isEmpty)
        #expect(hub.awaitsPlacement(of: "c-1"))
        // Other traffic from alice does not settle it; the call message with the id does.
        _ = hub.handle(.frame(aliceTablet, .send(.init(id: 7, to: "1002", body: "hello"))), now: 6)
        #expect(hub.awaitsPlacement(of: "c-1"))
        _ = hub.handle(.frame(aliceTablet, .send(.init(id: 8, to: "1002", body: Self.callMessage("c-1")))), now: 7)
        #expect(!hub.awaitsPlacement(of: "c-1"))
        let later = hub.handle(.tick, now: 60_000)
        #expect(!later.contains { if case .callNotPlaced = $0 { true } else { false } })
    }

    @Test mutating func aPlacedCallAnsweredBusyByTheLedgerIsSettledToo() {
        login(alicePhone, "1001")
        login(bob, "1002")
        let order = PlaceCallOrder(caller: "1001", callee: "1002", media: .video)
        _ = hub.handle(.placeCall(order, callId: "c-1"), now: 5)
        let send = ClientFrame.Send(id: 8, to: "1002", body: Self.callMessage("c-1"))
        _ = hub.handle(.answeredOnBehalf(alicePhone, send, body: "busy"), now: 6)
        #expect(!hub.awaitsPlacement(of: "c-1"))
    }

    @Test mutating func aPlacedCallNeverMadeIsReportedOnceItsWindowEnds() {
        login(alicePhone, "1001")
        login(bob, "1002")
        let order = PlaceCallOrder(caller: "1001", callee: "1002", media: .audio)
        _ = hub.handle(.placeCall(order, callId: "c-1"), now: 1_000)
        let actions = hub.handle(.tick, now: 1_000 + MatchLimits().placeWindowMillis)
        #expect(
            actions.contains(
                .callNotPlaced(
                    .init(
                        callId: "c-1", caller: "1001", callee: "1002", media: .audio, matchId: nil,
                        reason: "notPlaced"))))
    }

    @Test mutating func aMatchIsRoutedAndTheCallerClosingReportsTheMatchedCallNotPlaced() {
        login(alicePhone, "1001")
        login(bob, "1002")
        _ = hub.handle(.frame(alicePhone, .matchEnter(.init(id: 3, tags: ["chess"]))), now: 10)
        #expect(hub.matchWaitingCount == 1)
        let actions = hub.handle(.frame(bob, .matchEnter(.init(id: 4, tags: ["chess"]))), now: 20)
        #expect(
            frames(actions, to: bob).first == .matchQueue(.init(id: 4, waiting: true, tags: ["chess"])))
        #expect(
            frames(actions, to: alicePhone).last
                == .placeCall(
                    .init(callId: "call-h-1", callee: "1002", video: true, matchId: "match-h-1", tag: "chess")))
        #expect(hub.matchWaitingCount == 0)
        let closed = hub.handle(.disconnected(alicePhone), now: 30)
        #expect(
            closed.contains { if case .callNotPlaced(let call) = $0 { call.reason == "callerGone" } else { false } })
    }
}
