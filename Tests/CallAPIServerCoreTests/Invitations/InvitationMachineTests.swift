import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// The server's invitation arbitration, driven directly with explicit times: every lifecycle path and every
/// failure, with the default (RTM v1) windows unless a test sets its own.
@Suite struct InvitationMachineTests {
    var machine = InvitationMachine(limits: InvitationLimits())
    let caller = SessionID(1)
    let callee = InvitationEndpoint.local(SessionID(2))
    let calleeTablet = InvitationEndpoint.local(SessionID(3))
    let start: Int64 = 1_000_000

    /// Sends an invitation from "1001" (session 1) to "1002" (sessions 2 and 3); returns its id.
    mutating func invite(content: String = "join me", channelId: String = "room-7") -> String {
        let actions = machine.handle(
            .invite(
                caller, caller: "1001", .init(id: 5, to: "1002", content: content, channelId: channelId),
                calleeSessions: [callee, calleeTablet]), now: start)
        guard case .localInvitation(let answer) = frames(actions, to: caller).first else {
            Issue.record("no local_invitation answer in \(actions)")
            return ""
        }
        return answer.invitationId
    }

    func frames(_ actions: [InvitationAction], to id: SessionID) -> [ServerFrame] {
        frames(actions, to: .local(id))
    }

    func frames(_ actions: [InvitationAction], to id: InvitationEndpoint) -> [ServerFrame] {
        actions.compactMap { if case .send(id, let frame) = $0 { frame } else { nil } }
    }

    func local(_ actions: [InvitationAction]) -> [ServerFrame.LocalInvitation] {
        frames(actions, to: caller).compactMap { if case .localInvitation(let f) = $0 { f } else { nil } }
    }

    func remote(_ actions: [InvitationAction], to id: InvitationEndpoint) -> [ServerFrame.RemoteInvitation] {
        frames(actions, to: id).compactMap { if case .remoteInvitation(let f) = $0 { f } else { nil } }
    }

    func errorCode(_ actions: [InvitationAction], to id: SessionID) -> SignalErrorCode? {
        errorCode(actions, to: .local(id))
    }

    func errorCode(_ actions: [InvitationAction], to id: InvitationEndpoint) -> SignalErrorCode? {
        frames(actions, to: id).compactMap { if case .error(let e) = $0 { e.code } else { nil } }.first
    }

    // MARK: - Lifecycle

    @Test mutating func inviteAnswersSentToRemoteAndHandsItToEveryCalleeSession() {
        let actions = machine.handle(
            .invite(
                caller, caller: "1001", .init(id: 5, to: "1002", content: "join me", channelId: "room-7"),
                calleeSessions: [callee, calleeTablet]), now: start)
        #expect(
            local(actions) == [
                .init(
                    id: 5, invitationId: "i-1", calleeId: "1002", state: .sentToRemote, expiresAt: start + 60_000)
            ])
        let offer = ServerFrame.RemoteInvitation(
            invitationId: "i-1", callerId: "1001", state: .invitationReceived, content: "join me",
            channelId: "room-7", expiresAt: start + 60_000)
        #expect(remote(actions, to: callee) == [offer])
        #expect(remote(actions, to: calleeTablet) == [offer])
    }

    @Test mutating func anOfflineCalleeFailsTheInvitationAtOnce() {
        let actions = machine.handle(
            .invite(caller, caller: "1001", .init(id: 5, to: "1002"), calleeSessions: []), now: start)
        #expect(local(actions).map(\.state) == [.failure])
        #expect(local(actions).first?.reason == .peerOffline)
        #expect(local(actions).first?.id == 5)
        #expect(machine.pending.isEmpty)
    }

    @Test mutating func theFirstReceiptTellsTheCallerAndLaterOnesAreIgnored() {
        let id = invite()
        let first = machine.handle(.received(callee, .init(invitationId: id)), now: start)
        #expect(local(first).map(\.state) == [.receivedByRemote])
        let second = machine.handle(.received(calleeTablet, .init(invitationId: id)), now: start)
        #expect(second.isEmpty)
    }

    @Test mutating func anAcceptCompletesOnlyWhenTheCallerAcknowledgesIt() {
        let id = invite()
        _ = machine.handle(.received(callee, .init(invitationId: id)), now: start)
        let accepted = machine.handle(.accept(callee, .init(id: 9, invitationId: id, response: "ok")), now: start + 5)
        #expect(remote(accepted, to: callee).map(\.state) == [.acceptSentToLocal])
        #expect(remote(accepted, to: callee).first?.id == 9)
        #expect(remote(accepted, to: calleeTablet).isEmpty)
        #expect(local(accepted).map(\.state) == [.acceptPending])
        #expect(local(accepted).first?.response == "ok")

        let acknowledged = machine.handle(.acknowledgeAccept(caller, .init(id: 6, invitationId: id)), now: start)
        #expect(local(acknowledged).map(\.state) == [.acceptedByRemote])
        #expect(local(acknowledged).first?.response == "ok")
        #expect(remote(acknowledged, to: callee).map(\.state) == [.accepted])
        #expect(remote(acknowledged, to: calleeTablet).map(\.state) == [.accepted])
        #expect(machine.pending.isEmpty)
    }

    @Test mutating func anAcceptBeforeTheReceiptTellsTheCallerBothInOrder() {
        let id = invite()
        let accepted = machine.handle(.accept(callee, .init(invitationId: id)), now: start + 5)
        #expect(local(accepted).map(\.state) == [.receivedByRemote, .acceptPending])
    }

    @Test mutating func aRefusalEndsItForTheCallerAndEveryCalleeSession() {
        let id = invite()
        let refused = machine.handle(
            .refuse(calleeTablet, .init(id: 4, invitationId: id, response: "busy")), now: start)
        #expect(local(refused).map(\.state) == [.refusedByRemote])
        #expect(local(refused).first?.response == "busy")
        #expect(remote(refused, to: calleeTablet).map(\.id) == [4])
        #expect(remote(refused, to: callee).map(\.state) == [.refused])
        #expect(remote(refused, to: callee).first?.id == nil)
        #expect(machine.pending.isEmpty)
    }

    @Test mutating func aCancelEndsItForTheCallee() {
        let id = invite()
        let canceled = machine.handle(.cancel(caller, .init(id: 8, invitationId: id)), now: start)
        #expect(local(canceled).map(\.state) == [.canceled])
        #expect(local(canceled).first?.id == 8)
        #expect(remote(canceled, to: callee).map(\.state) == [.canceled])
        #expect(remote(canceled, to: calleeTablet).map(\.state) == [.canceled])
    }

    @Test mutating func onceAcceptedItCanNoLongerBeCancelledRefusedOrAcceptedAgain() {
        let id = invite()
        _ = machine.handle(.accept(callee, .init(invitationId: id)), now: start)
        #expect(
            errorCode(machine.handle(.cancel(caller, .init(invitationId: id)), now: start), to: caller)
                == .invitationAlreadyAccepted)
        #expect(
            errorCode(machine.handle(.refuse(calleeTablet, .init(invitationId: id)), now: start), to: calleeTablet)
                == .invitationAlreadyAccepted)
        #expect(
            errorCode(machine.handle(.accept(calleeTablet, .init(invitationId: id)), now: start), to: calleeTablet)
                == .invitationAlreadyAccepted)
    }

    // MARK: - Windows

    @Test mutating func noReceiptWithinTheReceiveWindowFailsWithPeerNoResponse() {
        let id = invite()
        #expect(machine.handle(.tick, now: start + 29_999).isEmpty)
        let failed = machine.handle(.tick, now: start + 30_000)
        #expect(local(failed).map(\.reason) == [.peerNoResponse])
        #expect(remote(failed, to: callee).map(\.reason) == [.invitationExpire])
        #expect(machine.pending[id] == nil)
    }

    @Test mutating func aReceivedInvitationNobodyAnswersExpiresSixtySecondsAfterItWasSent() {
        _ = machine.handle(.received(callee, .init(invitationId: invite())), now: start)
        #expect(machine.handle(.tick, now: start + 59_999).isEmpty)
        let expired = machine.handle(.tick, now: start + 60_000)
        #expect(local(expired).map(\.reason) == [.invitationExpire])
        #expect(remote(expired, to: callee).map(\.reason) == [.invitationExpire])
        #expect(remote(expired, to: calleeTablet).map(\.reason) == [.invitationExpire])
    }

    @Test mutating func anAcceptTheCallerDoesNotAcknowledgeFailsWithAcceptFailureOnBothSides() {
        let id = invite()
        _ = machine.handle(.received(callee, .init(invitationId: id)), now: start)
        _ = machine.handle(.accept(callee, .init(invitationId: id)), now: start + 1_000)
        #expect(machine.handle(.tick, now: start + 10_999).isEmpty)
        let failed = machine.handle(.tick, now: start + 11_000)
        #expect(local(failed).map(\.reason) == [.acceptFailure])
        #expect(remote(failed, to: callee).map(\.reason) == [.acceptFailure])
        // A late acknowledgement finds nothing.
        #expect(
            errorCode(
                machine.handle(.acknowledgeAccept(caller, .init(id: 3, invitationId: id)), now: start), to: caller)
                == .invitationNotFound)
    }

    @Test mutating func configuredWindowsReplaceTheDefaults() {
        var limits = InvitationLimits()
        limits.receiveWindowMillis = 2_000
        limits.expiryMillis = 5_000
        machine = InvitationMachine(limits: limits)
        let unreceived = invite()
        let late = machine.handle(.tick, now: start + 2_000)
        #expect(local(late).map(\.invitationId) == [unreceived])
        _ = machine.handle(.received(callee, .init(invitationId: invite())), now: start)
        #expect(local(machine.handle(.tick, now: start + 5_000)).map(\.reason) == [.invitationExpire])
    }

    // MARK: - Vanishing

    @Test mutating func theCalleeGoingOfflineMidInvitationFailsItWithPeerOffline() {
        let id = invite()
        _ = machine.handle(.received(callee, .init(invitationId: id)), now: start)
        // One device leaving is not the user leaving.
        #expect(machine.handle(.sessionClosed(calleeTablet), now: start).isEmpty)
        let gone = machine.handle(.sessionClosed(callee), now: start)
        #expect(local(gone).map(\.state) == [.failure])
        #expect(local(gone).map(\.reason) == [.peerOffline])
        #expect(machine.pending.isEmpty)
    }

    @Test mutating func theCallerVanishingFailsItForTheCallee() {
        let id = invite()
        _ = machine.handle(.accept(callee, .init(invitationId: id)), now: start)
        let gone = machine.handle(.sessionClosed(.local(caller)), now: start)
        #expect(remote(gone, to: callee).map(\.reason) == [.peerOffline])
        #expect(remote(gone, to: calleeTablet).map(\.reason) == [.peerOffline])
        #expect(machine.handle(.tick, now: start + 100_000).isEmpty)
    }

    @Test mutating func theAcceptingDeviceLeavingBeforeTheAcknowledgementLeavesTheOtherDevicesToHearTheEnd() {
        let id = invite()
        _ = machine.handle(.accept(callee, .init(invitationId: id)), now: start)
        #expect(machine.handle(.sessionClosed(callee), now: start).isEmpty)
        let acknowledged = machine.handle(.acknowledgeAccept(caller, .init(invitationId: id)), now: start)
        #expect(local(acknowledged).map(\.state) == [.acceptedByRemote])
        #expect(remote(acknowledged, to: calleeTablet).map(\.state) == [.accepted])
        #expect(remote(acknowledged, to: callee).isEmpty)
    }

    // MARK: - Bad requests

    @Test mutating func badInvitationsGetClearErrors() {
        func code(_ invite: ClientFrame.Invite) -> SignalErrorCode? {
            var copy = machine
            return errorCode(
                copy.handle(.invite(caller, caller: "1001", invite, calleeSessions: [callee]), now: start), to: caller)
        }
        #expect(code(.init(id: 1, to: "not a user")) == .invalidTarget)
        #expect(code(.init(id: 1, to: "1001")) == .invalidTarget)
        #expect(code(.init(id: 1, to: "1002", content: String(repeating: "x", count: 8 * 1024 + 1))) == .invalidFrame)
        #expect(code(.init(id: 1, to: "1002", content: String(repeating: "x", count: 8 * 1024))) == nil)
        #expect(code(.init(id: 1, to: "1002", channelId: String(repeating: "c", count: 65))) == .invalidFrame)
    }

    @Test mutating func onlyTheSendingSessionMayCancelAndOnlyCalleeSessionsMayAnswer() {
        let id = invite()
        let otherCallerDevice = SessionID(9)
        #expect(
            errorCode(
                machine.handle(.cancel(otherCallerDevice, .init(invitationId: id)), now: start), to: otherCallerDevice)
                == .invitationNotFound)
        #expect(
            errorCode(machine.handle(.accept(.local(caller), .init(invitationId: id)), now: start), to: .local(caller))
                == .invitationNotFound)
        #expect(
            errorCode(machine.handle(.refuse(callee, .init(invitationId: "i-404")), now: start), to: callee)
                == .invitationNotFound)
        #expect(
            errorCode(
                machine.handle(
                    .accept(callee, .init(invitationId: id, response: String(repeating: "r", count: 9000))), now: start),
                to: callee) == .invalidFrame)
        #expect(machine.pending[id] != nil)
    }

    @Test mutating func pendingInvitationsAreBoundedPerCallerSessionAndPerCallee() {
        var limits = InvitationLimits()
        limits.maxPerCaller = 2
        limits.maxPerCallee = 3
        machine = InvitationMachine(limits: limits)
        _ = invite()
        _ = invite()
        let third = machine.handle(
            .invite(caller, caller: "1001", .init(id: 7, to: "1002"), calleeSessions: [callee]), now: start)
        #expect(errorCode(third, to: caller) == .tooManyInvitations)
        let other = SessionID(20)
        _ = machine.handle(.invite(other, caller: "1005", .init(to: "1002"), calleeSessions: [callee]), now: start)
        let fourth = machine.handle(
            .invite(other, caller: "1005", .init(id: 2, to: "1002"), calleeSessions: [callee]), now: start)
        #expect(errorCode(fourth, to: other) == .tooManyInvitations)
        // Ending one frees its place.
        _ = machine.handle(.sessionClosed(.local(caller)), now: start)
        let again = machine.handle(
            .invite(other, caller: "1005", .init(id: 3, to: "1002"), calleeSessions: [callee]), now: start)
        #expect(local(again).isEmpty && frames(again, to: other).count == 1)
    }
}
