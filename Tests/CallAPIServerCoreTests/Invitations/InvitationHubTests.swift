import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// Invitations inside the hub: frames routed to the machine, sessions closing and time passing end them.
@Suite struct InvitationHubTests {
    var hub = HubState(limits: HubLimits())
    let caller = SessionID(1)
    let callee = SessionID(2)

    mutating func login(_ id: SessionID, _ user: String, now: Int64 = 0) {
        hub.logIn(id, as: user, now: now)
    }

    func invitationFrames(_ actions: [HubAction], to id: SessionID) -> [ServerFrame] {
        actions.compactMap {
            guard case .send(id, let frame) = $0 else { return nil }
            switch frame {
            case .localInvitation, .remoteInvitation, .error: return frame
            default: return nil
            }
        }
    }

    @Test mutating func theHubRoutesAnInvitationToTheCalleesSessions() {
        login(caller, "1001")
        login(callee, "1002")
        let actions = hub.handle(.frame(caller, .invite(.init(id: 3, to: "1002", content: "hi"))), now: 10)
        guard case .remoteInvitation(let offer) = invitationFrames(actions, to: callee).first else {
            Issue.record("no remote_invitation in \(actions)")
            return
        }
        #expect(offer.callerId == "1001")
        #expect(offer.content == "hi")
        let receipt = hub.handle(.frame(callee, .invitationReceived(.init(invitationId: offer.invitationId))), now: 20)
        guard case .localInvitation(let received) = invitationFrames(receipt, to: caller).first else {
            Issue.record("no local_invitation in \(receipt)")
            return
        }
        #expect(received.state == .receivedByRemote)
    }

    @Test mutating func aCalleeDisconnectingFailsTheInvitationBeforePresenceIsTold() {
        login(caller, "1001")
        login(callee, "1002")
        _ = hub.handle(.frame(caller, .subscribe(.init(id: 2))), now: 5)
        _ = hub.handle(.frame(caller, .invite(.init(id: 3, to: "1002"))), now: 10)
        let actions = hub.handle(.disconnected(callee), now: 20)
        let frames = actions.compactMap { if case .send(caller, let frame) = $0 { frame } else { nil } }
        guard frames.count == 2, case .localInvitation(let failed) = frames[0], case .presenceChanged = frames[1]
        else {
            Issue.record("expected the failure then presence, got \(frames)")
            return
        }
        #expect(failed.reason == .peerOffline)
    }

    @Test mutating func theHubsTickRunsTheInvitationWindows() {
        var limits = HubLimits()
        limits.invitations.receiveWindowMillis = 3_000
        hub = HubState(limits: limits)
        login(caller, "1001")
        login(callee, "1002")
        _ = hub.handle(.frame(caller, .invite(.init(id: 3, to: "1002"))), now: 1_000)
        #expect(invitationFrames(hub.handle(.tick, now: 3_999), to: caller).isEmpty)
        let late = invitationFrames(hub.handle(.tick, now: 4_000), to: caller)
        guard case .localInvitation(let failed) = late.first else {
            Issue.record("expected a failure, got \(late)")
            return
        }
        #expect(failed.reason == .peerNoResponse)
    }

    @Test mutating func invitationFramesNeedALogin() {
        _ = hub.handle(.connected(caller), now: 0)
        let actions = hub.handle(.frame(caller, .invite(.init(id: 3, to: "1002"))), now: 1)
        #expect(
            invitationFrames(actions, to: caller) == [
                .error(
                    .init(
                        id: 3, code: .notLoggedIn, message: "log in first: send {\"type\":\"login\",\"token\":\"...\"}")
                )
            ])
    }
}
