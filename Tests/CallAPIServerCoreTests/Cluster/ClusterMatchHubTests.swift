import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// The match queue on nodes of a cluster, at the hub (docs/match.md, "In a cluster"): entries wait for the
/// database's answer, and a pair whose waiting user is on another node is placed there.
@Suite struct ClusterMatchHubTests {
    var a = HubState(limits: HubLimits(), runId: "ra", topology: .node("a"))
    var b = HubState(limits: HubLimits(), runId: "rb", topology: .node("b"))
    let alice = SessionID(1)
    let bob = SessionID(5)

    static func frames(_ actions: [HubAction], to id: SessionID) -> [ServerFrame] {
        actions.compactMap {
            guard case .send(id, let frame) = $0 else { return nil }
            switch frame {
            case .matchQueue, .matched, .placeCall, .error: return frame
            default: return nil
            }
        }
    }

    static func cluster(_ actions: [HubAction]) -> [ClusterAction] {
        actions.compactMap { if case .cluster(let action) = $0 { action } else { nil } }
    }

    /// alice 1001 on a, bob 1002 on b, each seeing the other.
    mutating func twoNodes() {
        a.logIn(alice, as: "1001")
        b.logIn(bob, as: "1002")
        _ = a.handle(.cluster(.remotePresence(RemotePresence(rows: [("b", "1002", [bob])]))), now: 1)
        _ = b.handle(.cluster(.remotePresence(RemotePresence(rows: [("a", "1001", [alice])]))), now: 1)
    }

    @Test mutating func anEntryWaitsForTheDatabaseAndBadTagsAreRefusedAtOnce() {
        twoNodes()
        let bad = a.handle(.frame(alice, .matchEnter(.init(id: 2, tags: []))), now: 5)
        #expect(Self.cluster(bad).isEmpty)
        guard case .error(let error) = Self.frames(bad, to: alice).first else {
            Issue.record("no error in \(bad)")
            return
        }
        #expect(error.code == .invalidFrame)

        let enter = ClientFrame.MatchEnter(id: 3, tags: ["paris"])
        let entering = a.handle(.frame(alice, .matchEnter(enter)), now: 6)
        #expect(Self.frames(entering, to: alice).isEmpty)
        let entry = ClusterMatchEntry(session: alice, user: "1001", enter: enter)
        #expect(Self.cluster(entering) == [.matchEnter(entry, maxWaiting: HubLimits().match.maxWaiting)])
        let answered = a.handle(.cluster(.matchEntered(entry, .waiting)), now: 7)
        #expect(Self.frames(answered, to: alice) == [.matchQueue(.init(id: 3, waiting: true, tags: ["paris"]))])
        // The session that entered closing takes the user out; one that did not enter writes nothing.
        #expect(Self.cluster(a.handle(.disconnected(alice), now: 8)).contains(.matchSessionClosed(alice)))
        a.logIn(SessionID(2), as: "1003")
        #expect(
            !Self.cluster(a.handle(.disconnected(SessionID(2)), now: 9)).contains(.matchSessionClosed(SessionID(2))))
    }

    @Test mutating func aPairWithAWaitingUserOnAnotherNodeIsPlacedThereByTheSessionThatEntered() throws {
        twoNodes()
        let enter = ClientFrame.MatchEnter(id: 4, tags: ["chess", "paris"])
        _ = b.handle(.frame(bob, .matchEnter(enter)), now: 10)
        let entry = ClusterMatchEntry(session: bob, user: "1002", enter: enter)
        let peer = ClusterMatchPeer(user: "1001", node: "a", session: alice, tag: "paris")
        let paired = b.handle(.cluster(.matchEntered(entry, .matched(peer))), now: 11)
        let (matchId, callId) = ("match-rb-1", "call-rb-1")
        #expect(
            Self.frames(paired, to: bob) == [
                .matchQueue(.init(id: 4, waiting: true, tags: ["chess", "paris"])),
                .matched(.init(matchId: matchId, peer: "1001", tag: "paris", callId: callId, role: .callee)),
            ])
        let order = PlaceCallOrder(caller: "1001", callee: "1002", media: .video)
        let placement = ForwardedPlacement(
            node: "a", order: order, callId: callId,
            match: ForwardedMatch(matchId: matchId, tag: "paris", callerSession: alice))
        #expect(Self.cluster(paired) == [.placeCall(placement)])

        let placed = a.handle(.cluster(.placements([placement])), now: 12)
        #expect(
            Self.frames(placed, to: alice) == [
                .matched(.init(matchId: matchId, peer: "1002", tag: "paris", callId: callId, role: .caller)),
                .placeCall(.init(callId: callId, callee: "1002", video: true, matchId: matchId, tag: "paris")),
            ])
        #expect(a.awaitsPlacement(of: callId))
    }

    @Test mutating func aPairWhoseWaitingSessionIsGoneIsRecordedNotPlaced() {
        twoNodes()
        a.logIn(SessionID(3), as: "1001")  // alice's other device stays, so alice is still online
        _ = a.handle(.disconnected(alice), now: 20)
        let placement = ForwardedPlacement(
            node: "a", order: PlaceCallOrder(caller: "1001", callee: "1002", media: .video), callId: "call-rb-1",
            match: ForwardedMatch(matchId: "match-rb-1", tag: "paris", callerSession: alice))
        let placed = a.handle(.cluster(.placements([placement])), now: 21)
        #expect(Self.frames(placed, to: SessionID(3)).isEmpty)
        #expect(
            placed.contains(
                .callNotPlaced(
                    NotPlacedCall(
                        callId: "call-rb-1", caller: "1001", callee: "1002", media: .video, matchId: "match-rb-1",
                        reason: "callerGone"))))
    }

    @Test mutating func aFullQueueOrAnUnreachableDatabaseIsTheEnteringSessionsError() {
        twoNodes()
        let enter = ClientFrame.MatchEnter(id: 6, tags: ["x"])
        let entry = ClusterMatchEntry(session: alice, user: "1001", enter: enter)
        _ = a.handle(.frame(alice, .matchEnter(enter)), now: 30)
        let full = Self.frames(a.handle(.cluster(.matchEntered(entry, .full(waiting: 9))), now: 31), to: alice)
        guard case .error(let fullError) = full.first else {
            Issue.record("no error in \(full)")
            return
        }
        #expect(fullError.code == .matchQueueFull && fullError.id == 6)
        let down = Self.frames(a.handle(.cluster(.matchEntered(entry, .failed(reason: "down"))), now: 32), to: alice)
        guard case .error(let downError) = down.first else {
            Issue.record("no error in \(down)")
            return
        }
        #expect(downError.code == .serverBusy)
        // Neither left the session entered: its closing writes nothing.
        #expect(!Self.cluster(a.handle(.disconnected(alice), now: 33)).contains(.matchSessionClosed(alice)))
    }
}
