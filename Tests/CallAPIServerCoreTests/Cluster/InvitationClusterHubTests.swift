import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// Invitations between two nodes' hubs (docs/invitations.md, "In a cluster"): the caller's node arbitrates, and the
/// steps it passes are handed to the other hub here as the link would, in order.
@Suite struct InvitationClusterHubTests {
    /// Sessions that stay open through the windows without pings.
    static let limits = {
        var limits = HubLimits()
        limits.idleTimeoutMillis = 3_600_000
        return limits
    }()
    var a = HubState(limits: Self.limits, runId: "ra", topology: .node("a"))
    var b = HubState(limits: Self.limits, runId: "rb", topology: .node("b"))
    let caller = SessionID(1)
    let phone = SessionID(7)
    let tablet = SessionID(8)

    static func frames(_ actions: [HubAction], to id: SessionID) -> [ServerFrame] {
        actions.compactMap {
            guard case .send(id, let frame) = $0 else { return nil }
            switch frame {
            case .localInvitation, .remoteInvitation, .error: return frame
            default: return nil
            }
        }
    }

    static func relays(_ actions: [HubAction]) -> [InvitationRelay] {
        actions.compactMap { if case .cluster(.invitation(let relay)) = $0 { relay } else { nil } }
    }

    /// Caller 1001 on a; callee 1002 with two sessions on b, which a has read.
    mutating func twoNodes() {
        a.logIn(caller, as: "1001")
        b.logIn(phone, as: "1002")
        b.logIn(tablet, as: "1002")
        _ = a.handle(.cluster(.remotePresence(RemotePresence(rows: [("b", "1002", [phone, tablet])]))), now: 1)
        _ = b.handle(.cluster(.remotePresence(RemotePresence(rows: [("a", "1001", [caller])]))), now: 1)
    }

    /// Hands `actions`' invitation steps for b to b; returns b's actions.
    mutating func toB(_ actions: [HubAction], now: Int64) -> [HubAction] {
        let steps = Self.relays(actions)
        #expect(steps.allSatisfy { $0.node == "b" })
        return b.handle(.cluster(.invitations(steps)), now: now)
    }

    /// Hands `actions`' invitation steps for a to a; returns a's actions.
    mutating func toA(_ actions: [HubAction], now: Int64) -> [HubAction] {
        let steps = Self.relays(actions)
        #expect(steps.allSatisfy { $0.node == "a" })
        return a.handle(.cluster(.invitations(steps)), now: now)
    }

    /// Sends an invitation from the caller and hands its offer to b; returns the offer b's sessions got.
    mutating func invite() -> ServerFrame.RemoteInvitation? {
        let sent = a.handle(.frame(caller, .invite(.init(id: 3, to: "1002", content: "hi"))), now: 10)
        guard case .localInvitation(let answer) = Self.frames(sent, to: caller).first, answer.state == .sentToRemote
        else {
            Issue.record("no sent_to_remote in \(sent)")
            return nil
        }
        let arrived = toB(sent, now: 11)
        guard case .remoteInvitation(let offer) = Self.frames(arrived, to: phone).first else {
            Issue.record("no offer for the phone in \(arrived)")
            return nil
        }
        #expect(Self.frames(arrived, to: tablet) == [.remoteInvitation(offer)])
        #expect(offer.invitationId == answer.invitationId)
        return offer
    }

    @Test mutating func anInvitationToACalleeOnAnotherNodeIsAcceptedThroughThatNode() throws {
        twoNodes()
        let offer = try #require(invite())
        #expect(offer.invitationId.hasPrefix("i-ra-"))
        #expect(offer.callerId == "1001" && offer.content == "hi")

        // The phone's receipt and accept go to a, which tells the caller and answers the phone through b.
        let receipt = b.handle(.frame(phone, .invitationReceived(.init(invitationId: offer.invitationId))), now: 12)
        #expect(Self.frames(receipt, to: phone).isEmpty)
        let received = toA(receipt, now: 13)
        guard case .localInvitation(let heard) = Self.frames(received, to: caller).first else {
            Issue.record("no receipt for the caller in \(received)")
            return
        }
        #expect(heard.state == .receivedByRemote)

        let accept = b.handle(
            .frame(phone, .acceptInvitation(.init(id: 4, invitationId: offer.invitationId, response: "yes"))), now: 14)
        let accepting = toA(accept, now: 15)
        guard case .localInvitation(let pending) = Self.frames(accepting, to: caller).first else {
            Issue.record("no accept_pending in \(accepting)")
            return
        }
        #expect(pending.state == .acceptPending && pending.response == "yes")
        let answered = toB(accepting, now: 16)
        guard case .remoteInvitation(let answer) = Self.frames(answered, to: phone).first else {
            Issue.record("no answer for the phone in \(answered)")
            return
        }
        #expect(answer.id == 4 && answer.state == .acceptSentToLocal)
        #expect(Self.frames(answered, to: tablet).isEmpty)

        // The caller's acknowledgement completes it on both nodes, for both of the callee's sessions.
        let acknowledged = a.handle(
            .frame(caller, .acknowledgeAccept(.init(id: 5, invitationId: offer.invitationId))), now: 17)
        guard case .localInvitation(let done) = Self.frames(acknowledged, to: caller).first else {
            Issue.record("no accepted_by_remote in \(acknowledged)")
            return
        }
        #expect(done.state == .acceptedByRemote)
        let ended = toB(acknowledged, now: 18)
        for session in [phone, tablet] {
            guard case .remoteInvitation(let final) = Self.frames(ended, to: session).first else {
                Issue.record("no accepted for \(session) in \(ended)")
                return
            }
            #expect(final.state == .accepted && final.response == "yes")
        }
        #expect(b.remoteInvitations.count == 0)
        #expect(a.invitations.pending.isEmpty)
    }

    @Test mutating func aRefusalOnTheOtherNodeEndsItForTheCallerAndAnswersTheRefusingSession() throws {
        twoNodes()
        let offer = try #require(invite())
        let refuse = b.handle(
            .frame(tablet, .refuseInvitation(.init(id: 6, invitationId: offer.invitationId, response: "busy"))), now: 12
        )
        let refused = toA(refuse, now: 13)
        guard case .localInvitation(let heard) = Self.frames(refused, to: caller).first else {
            Issue.record("no refusal for the caller in \(refused)")
            return
        }
        #expect(heard.state == .refusedByRemote && heard.response == "busy")
        let ended = toB(refused, now: 14)
        let tabletFrames = Self.frames(ended, to: tablet)
        let phoneFrames = Self.frames(ended, to: phone)
        guard case .remoteInvitation(let tabletEnd) = tabletFrames.first,
            case .remoteInvitation(let phoneEnd) = phoneFrames.first
        else {
            Issue.record("expected the refusal on both sessions, got \(ended)")
            return
        }
        #expect(tabletEnd.id == 6 && tabletEnd.state == .refused)
        #expect(phoneEnd.id == nil && phoneEnd.state == .refused)
    }

    @Test mutating func theCalleesLastSessionClosingOnItsNodeFailsTheInvitationForTheCaller() throws {
        twoNodes()
        _ = try #require(invite())
        let phoneGone = b.handle(.disconnected(phone), now: 20)
        #expect(
            Self.relays(phoneGone) == [InvitationRelay(node: "a", step: .gone(from: "b", user: "1002", session: phone))]
        )
        #expect(Self.frames(toA(phoneGone, now: 21), to: caller).isEmpty)
        let tabletGone = b.handle(.disconnected(tablet), now: 22)
        let failed = toA(tabletGone, now: 23)
        guard case .localInvitation(let failure) = Self.frames(failed, to: caller).first else {
            Issue.record("no failure for the caller in \(failed)")
            return
        }
        #expect(failure.state == .failure && failure.reason == .peerOffline)
    }

    @Test mutating func theCallersNodeLeavingEndsItsInvitationsForTheSessionsOnTheOtherNode() throws {
        twoNodes()
        let offer = try #require(invite())
        // a died: its sessions are gone from the rows b reads.
        let gone = b.handle(.cluster(.remotePresence(RemotePresence())), now: 30)
        for session in [phone, tablet] {
            #expect(
                Self.frames(gone, to: session) == [
                    .remoteInvitation(
                        .init(
                            invitationId: offer.invitationId, callerId: "1001", state: .failure, reason: .peerOffline))
                ])
        }
        // An ending from a arriving after that repeats it: not given again.
        let late = a.handle(.frame(caller, .cancelInvitation(.init(id: 9, invitationId: offer.invitationId))), now: 31)
        #expect(Self.frames(toB(late, now: 32), to: phone).isEmpty)
    }

    @Test mutating func theCalleesNodeLeavingFailsTheInvitationForTheCaller() throws {
        twoNodes()
        _ = try #require(invite())
        let gone = a.handle(.cluster(.remotePresence(RemotePresence())), now: 30)
        guard case .localInvitation(let failure) = Self.frames(gone, to: caller).first else {
            Issue.record("no failure for the caller in \(gone)")
            return
        }
        #expect(failure.state == .failure && failure.reason == .peerOffline)
        #expect(Self.relays(gone).isEmpty)
    }

    @Test mutating func aStepForASessionThatIsGoneOrSomeoneElsesIsAnsweredGone() throws {
        twoNodes()
        _ = b.handle(.disconnected(tablet), now: 5)  // a has not read it yet
        b.logIn(SessionID(9), as: "1003")
        let sent = a.handle(.frame(caller, .invite(.init(id: 3, to: "1002"))), now: 10)
        var steps = Self.relays(sent)
        // As if b had been restarted and given the phone's number to someone else's session.
        if case .frame(let frame, _, let user, let owner) = steps[0].step {
            steps[0].step = .frame(frame, session: SessionID(9), user: user, owner: owner)
        }
        let arrived = b.handle(.cluster(.invitations(steps)), now: 11)
        #expect(Self.frames(arrived, to: SessionID(9)).isEmpty)
        #expect(
            Self.relays(arrived).map(\.step) == [
                .gone(from: "b", user: "1002", session: SessionID(9)), .gone(from: "b", user: "1002", session: tablet),
            ])
    }

    @Test mutating func anInvitationWhoseNodeNeverEndsItIsEndedHereAfterItsLastWindow() throws {
        twoNodes()
        let offer = try #require(invite())
        let expiresAt = try #require(offer.expiresAt)
        let end = expiresAt + Self.limits.invitations.acceptWindowMillis + HubState.remoteInvitationGraceMillis
        #expect(Self.frames(b.handle(.tick, now: end - 1), to: phone).isEmpty)
        let expired = Self.frames(b.handle(.tick, now: end), to: phone)
        guard case .remoteInvitation(let failure) = expired.first else {
            Issue.record("no failure in \(expired)")
            return
        }
        #expect(failure.state == .failure && failure.reason == .invitationExpire)
        #expect(b.remoteInvitations.count == 0)
    }
}
