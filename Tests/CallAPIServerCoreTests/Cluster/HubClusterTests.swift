import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// The hub on a node of a cluster: messages for users on other nodes go to the link, and their senders' answers
/// wait for its report (docs/scale-out.md).
@Suite struct HubClusterTests {
    var hub = HubState(limits: HubLimits(), topology: .node("a"))
    let alice = SessionID(1)
    let bob = SessionID(2)

    mutating func login(_ id: SessionID, _ user: String) -> [HubAction] {
        hub.logIn(id, as: user)
    }

    func frames(_ actions: [HubAction], to id: SessionID) -> [ServerFrame] {
        actions.compactMap { if case .send(id, let frame) = $0 { frame } else { nil } }
    }

    func clusterActions(_ actions: [HubAction]) -> [ClusterAction] {
        actions.compactMap { if case .cluster(let action) = $0 { action } else { nil } }
    }

    @Test mutating func loginsAndClosesAreWrittenAsPresenceRows() {
        #expect(clusterActions(login(alice, "1001")) == [.online(SessionRow(session: alice, userId: "1001"))])
        #expect(clusterActions(hub.handle(.disconnected(alice), now: 5)) == [.offline(alice, userId: "1001")])
    }

    @Test mutating func aSingleNodeHubWritesNoRowsAndItsMessageIdsHaveNoNode() {
        hub = HubState(limits: HubLimits())
        #expect(clusterActions(login(alice, "1001")).isEmpty)
        _ = login(bob, "1002")
        let actions = hub.handle(.frame(alice, .send(.init(id: 3, to: "1002", body: "x"))), now: 1)
        guard case .message(let message) = frames(actions, to: bob).first else {
            Issue.record("no message in \(actions)")
            return
        }
        #expect(message.messageId == "m-1")
    }

    @Test mutating func aSendToAUserOnAnotherNodeIsForwardedAndAnsweredOnlyWhenWritten() {
        _ = login(alice, "1001")
        _ = hub.handle(.cluster(.remotePresence(RemotePresence(counts: [("b", "1002", 2)]))), now: 1)
        let actions = hub.handle(.frame(alice, .send(.init(id: 3, to: "1002", body: "x"))), now: 2)
        #expect(frames(actions, to: alice).isEmpty)
        let receipt = ForwardReceipt.answer(
            SendReceipt(
                session: alice, requestId: 3, messageId: "m-a-1", receiver: "1002", localSessions: 0,
                remoteSessions: 2))
        #expect(
            clusterActions(actions) == [
                .forward(
                    [
                        ClusterEnvelope(
                            node: "b", userId: "1002", from: "1001", body: MessageBody("x"), sentAt: 2,
                            messageId: "m-a-1")
                    ], receipt: receipt)
            ])
        let answered = hub.handle(.cluster(.forwarded(receipt)), now: 3)
        #expect(
            frames(answered, to: alice) == [
                .answer(.init(id: 3, result: .delivered, messageId: "m-a-1", sessions: 2))
            ])
    }

    @Test mutating func aForwardThatFailedIsAnsweredWithTheReasonUnlessSessionsHereHadIt() {
        _ = login(alice, "1001")
        let receipt = SendReceipt(
            session: alice, requestId: 3, messageId: "m-a-1", receiver: "1002", localSessions: 0, remoteSessions: 1)
        let failed = frames(hub.handle(.cluster(.forwardFailed(.answer(receipt), reason: "down")), now: 3), to: alice)
        guard case .answer(let answer) = failed.first else {
            Issue.record("no answer in \(failed)")
            return
        }
        #expect(answer.result == .failed && answer.reason == .serverBusy && answer.message?.contains("down") == true)
        var partly = receipt
        partly.localSessions = 1
        #expect(
            frames(hub.handle(.cluster(.forwardFailed(.answer(partly), reason: "down")), now: 4), to: alice) == [
                .answer(.init(id: 3, result: .delivered, messageId: "m-a-1", sessions: 1))
            ])
    }

    @Test mutating func messagesFromOtherNodesReachTheReceiversSessionsOrGoBackUnclaimed() {
        _ = login(bob, "1002")
        let forBob = ClusterEnvelope(
            node: "a", userId: "1002", from: "1001", body: MessageBody("x"), sentAt: 2, messageId: "m-b-4")
        let forCarol = ClusterEnvelope(
            node: "a", userId: "1003", from: "1001", body: MessageBody("y"), sentAt: 2, messageId: "m-b-5")
        let actions = hub.handle(.cluster(.arrived([forBob, forCarol])), now: 3)
        #expect(
            frames(actions, to: bob) == [
                .message(.init(from: "1001", relayBody: MessageBody("x"), sentAt: 2, messageId: "m-b-4"))
            ])
        #expect(clusterActions(actions) == [.unclaimed([forCarol])])
    }

    @Test mutating func subscribersHearOfUsersComingAndGoingOnOtherNodes() {
        _ = login(alice, "1001")
        _ = hub.handle(.frame(alice, .subscribe(.init(id: 2))), now: 1)
        let online = hub.handle(.cluster(.remotePresence(RemotePresence(counts: [("b", "1002", 1)]))), now: 2)
        #expect(frames(online, to: alice) == [.presenceChanged(.init(userId: "1002", online: true))])
        #expect(hub.onlineUsers == ["1001", "1002"])
        let offline = hub.handle(.cluster(.remotePresence(RemotePresence())), now: 3)
        #expect(frames(offline, to: alice) == [.presenceChanged(.init(userId: "1002", online: false))])
    }

    @Test mutating func anArrivalIsReportedToTheLedgerAsFromAStandInOfItsSenderButAnOwnDeviceCopyIsNot() {
        hub = HubState(limits: HubLimits(), reportsRelays: true, topology: .node("a"))
        _ = login(bob, "1002")
        let message = ClusterEnvelope(
            node: "a", userId: "1002", from: "1001", body: MessageBody("x"), sentAt: 2, messageId: "m-b-4")
        let copy = ClusterEnvelope(
            node: "a", userId: "1002", from: "1002", body: MessageBody("y"), sentAt: 2, messageId: "m-b-5",
            copyOf: "1001")
        let actions = hub.handle(.cluster(.arrived([message, copy])), now: 3)
        let reported = actions.compactMap { if case .relayed(let send) = $0 { send } else { nil } }
        #expect(
            reported == [
                RelayedSend(
                    from: "1001", fromSession: .remote(node: "b", user: "1001"), to: "1002",
                    relayBody: MessageBody("x"), result: .delivered([bob]))
            ])
    }

    @Test mutating func aUserLeavingAnotherNodeClosesItsStandInForTheLedger() {
        hub = HubState(limits: HubLimits(), reportsRelays: true, topology: .node("a"))
        let both = RemotePresence(counts: [("b", "1002", 1), ("c", "1002", 2), ("c", "1003", 1)])
        _ = hub.handle(.cluster(.remotePresence(both)), now: 1)
        let actions = hub.handle(.cluster(.remotePresence(RemotePresence(counts: [("b", "1002", 1)]))), now: 2)
        let gone = actions.compactMap { if case .remoteSessionsGone(let id) = $0 { id } else { nil } }
        #expect(gone == [.remote(node: "c", user: "1002"), .remote(node: "c", user: "1003")])
    }

    @Test mutating func messagesHeldHereFollowTheirReceiverToTheNodeTheyLogInToAndTheSenderHearsOnceWritten() {
        _ = login(alice, "1001")
        let queued = hub.handle(.frame(alice, .send(.init(id: 3, to: "1002", body: "x", ttl: 60))), now: 10)
        guard case .park(_, _, let receipt)? = clusterActions(queued).first else {
            Issue.record("not parked: \(queued)")
            return
        }
        #expect(
            frames(hub.handle(.cluster(.forwardFailed(receipt, reason: "down")), now: 11), to: alice) == [
                .answer(.init(id: 3, result: .queued, messageId: "m-a-1", ttl: 60))
            ])
        #expect(hub.heldCount == 1)

        // 1002 logs in to node b: the next presence read hands the message to b's mailbox, flagged as held.
        let read = hub.handle(.cluster(.remotePresence(RemotePresence(counts: [("b", "1002", 1)]))), now: 500)
        let envelope = ClusterEnvelope(
            node: "b", userId: "1002", from: "1001", body: MessageBody("x"), sentAt: 10, messageId: "m-a-1",
            held: true)
        guard case .forward(let envelopes, .handover(let userId, let messages))? = clusterActions(read).first else {
            Issue.record("no handover in \(read)")
            return
        }
        #expect(envelopes == [envelope] && userId == "1002" && messages.map(\.messageId) == ["m-a-1"])
        #expect(envelope.frame == .message(.init(from: "1001", body: "x", sentAt: 10, messageId: "m-a-1", held: true)))
        #expect(hub.heldCount == 0)

        // Not written (the database is away): held here again, and handed over at the next read.
        _ = hub.handle(.cluster(.forwardFailed(.handover(userId: userId, messages), reason: "down")), now: 600)
        #expect(hub.heldCount == 1)
        let again = hub.handle(.cluster(.remotePresence(RemotePresence(counts: [("b", "1002", 1)]))), now: 700)
        #expect(clusterActions(again) == [.forward([envelope], receipt: .handover(userId: "1002", messages))])

        let written = hub.handle(.cluster(.forwarded(.handover(userId: "1002", messages))), now: 800)
        #expect(
            frames(written, to: alice) == [.heldResult(.init(messageId: "m-a-1", to: "1002", result: .delivered))])
    }

    @Test mutating func aHeldMessageThatExpiredBeforeItsReceiverLoggedInElsewhereIsNotHandedOver() {
        _ = login(alice, "1001")
        _ = hub.handle(.frame(alice, .send(.init(id: 3, to: "1002", body: "x", ttl: 1))), now: 10)
        let read = hub.handle(.cluster(.remotePresence(RemotePresence(counts: [("b", "1002", 1)]))), now: 1_010)
        #expect(clusterActions(read).isEmpty)
        #expect(frames(read, to: alice) == [.heldResult(.init(messageId: "m-a-1", to: "1002", result: .expired))])
        #expect(hub.heldCount == 0)
    }

    @Test mutating func aCallPlacedForACallerOnAnotherNodeIsHandedToThatNodeWhichPlacesIt() {
        _ = login(bob, "1002")
        _ = hub.handle(.cluster(.remotePresence(RemotePresence(counts: [("b", "1001", 1)]))), now: 1)
        let order = PlaceCallOrder(caller: "1001", callee: "1002", media: .video)
        #expect(hub.placementProblem(order) == nil && hub.placesElsewhere(order))
        let handed = hub.handle(.placeCall(order, callId: "c-1"), now: 2)
        #expect(clusterActions(handed) == [.placeCall(ForwardedPlacement(node: "b", order: order, callId: "c-1"))])
        #expect(!hub.awaitsPlacement(of: "c-1"))

        // Node b's side: its caller's newest session is told to place the call.
        var nodeB = HubClusterTests()
        nodeB.hub = HubState(limits: HubLimits(), topology: .node("b"))
        _ = nodeB.login(alice, "1001")
        _ = nodeB.hub.handle(.cluster(.remotePresence(RemotePresence(counts: [("a", "1002", 1)]))), now: 1)
        let placed = nodeB.hub.handle(
            .cluster(.placements([ForwardedPlacement(node: "b", order: order, callId: "c-1")])), now: 3)
        #expect(frames(placed, to: alice) == [.placeCall(.init(callId: "c-1", callee: "1002", video: true))])
        #expect(nodeB.hub.awaitsPlacement(of: "c-1"))
    }

    @Test mutating func aCallHandedOverAfterItsCallerLeftIsRecordedNotPlaced() {
        _ = hub.handle(.cluster(.remotePresence(RemotePresence(counts: [("c", "1002", 1)]))), now: 1)
        let order = PlaceCallOrder(caller: "1001", callee: "1002", media: .audio)
        let actions = hub.handle(
            .cluster(.placements([ForwardedPlacement(node: "a", order: order, callId: "c-2")])), now: 2)
        #expect(
            actions == [
                .callNotPlaced(
                    NotPlacedCall(
                        callId: "c-2", caller: "1001", callee: "1002", media: .audio, matchId: nil,
                        reason: "callerGone"))
            ])
    }

    @Test mutating func aMessageHeldHereIsParkedInTheMailboxAndTakenOutOnceDelivered() {
        _ = login(alice, "1001")
        let queued = hub.handle(.frame(alice, .send(.init(id: 3, to: "1002", body: "x", ttl: 60))), now: 10)
        let parked = ClusterEnvelope(
            node: "a", userId: "1002", from: "1001", body: MessageBody("x"), sentAt: 10, messageId: "m-a-1",
            held: true)
        let answer = ServerFrame.Answer(id: 3, result: .queued, messageId: "m-a-1", ttl: 60)
        #expect(clusterActions(queued) == [.park(parked, expiresAt: 60_010, receipt: .parked(alice, answer))])
        // The sender hears `queued` once the parked copy is written.
        #expect(frames(queued, to: alice).isEmpty)
        let written = hub.handle(.cluster(.forwarded(.parked(alice, answer))), now: 11)
        #expect(frames(written, to: alice) == [.answer(answer)])

        let delivered = login(bob, "1002")
        #expect(
            clusterActions(delivered) == [
                .online(SessionRow(session: bob, userId: "1002")), .unpark(messageIds: ["m-a-1"]),
            ])
        #expect(frames(delivered, to: bob).contains { if case .message(let m) = $0 { m.held == true } else { false } })
    }

    @Test mutating func aHandedOverMessageIsTakenOutOfTheMailboxOnceWritten() {
        _ = login(alice, "1001")
        _ = hub.handle(.frame(alice, .send(.init(id: 3, to: "1002", body: "x", ttl: 60))), now: 10)
        let read = hub.handle(.cluster(.remotePresence(RemotePresence(counts: [("b", "1002", 1)]))), now: 20)
        guard case .forward(_, .handover(let userId, let messages))? = clusterActions(read).first else {
            Issue.record("no handover in \(read)")
            return
        }
        let written = hub.handle(.cluster(.forwarded(.handover(userId: userId, messages))), now: 30)
        #expect(clusterActions(written) == [.unpark(messageIds: ["m-a-1"])])
    }

    @Test mutating func aSingleNodeParksNothing() {
        hub = HubState(limits: HubLimits())
        _ = login(alice, "1001")
        let queued = hub.handle(.frame(alice, .send(.init(id: 3, to: "1002", body: "x", ttl: 60))), now: 10)
        #expect(clusterActions(queued).isEmpty)
        #expect(clusterActions(login(bob, "1002")).isEmpty)
    }
}

extension HubClusterTests {
    /// The server's end of an abandoned ring (docs/ledger.md) reaches each side on this node and on the others.
    @Test mutating func anAbandonedRingsCancelsReachTheCallerHereAndTheCalleeOnAnotherNode() {
        _ = login(alice, "1001")
        _ = hub.handle(.cluster(.remotePresence(RemotePresence(counts: [("b", "1002", 1)]))), now: 1)
        let actions = hub.handle(
            .ringAbandoned(AbandonedRing(callId: "c9", caller: "1001", callee: "1002", callerDevice: "phone")), now: 5)
        let toCaller = frames(actions, to: alice).compactMap { if case .message(let m) = $0 { m } else { nil } }
        #expect(toCaller.map(\.from) == ["1002"])
        #expect(toCaller.first?.body.contains("\"cancelCallByInternal\":1") == true)
        let forwarded = clusterActions(actions).flatMap { action -> [ClusterEnvelope] in
            if case .forward(let envelopes, nil) = action { envelopes } else { [] }
        }
        #expect(forwarded.map(\.node) == ["b"])
        #expect(forwarded.first?.from == "1001")
        #expect(forwarded.first?.body.text.contains("\"deviceId\":\"phone\"") == true)
    }
}
