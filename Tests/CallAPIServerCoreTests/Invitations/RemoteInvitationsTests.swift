import CallAPISignalProtocol
import Testing

@testable import CallAPIServerCore

/// The other nodes' invitations as a node with callee sessions keeps them: learned from the frames passed to its
/// sessions, forgotten at their endings.
@Suite struct RemoteInvitationsTests {
    var table = RemoteInvitations()
    let phone = SessionID(7)
    let tablet = SessionID(8)

    func frame(_ state: ServerFrame.RemoteInvitation.State, _ id: String = "i-x-1", expiresAt: Int64? = 60_000)
        -> ServerFrame
    {
        .remoteInvitation(.init(invitationId: id, callerId: "1001", state: state, expiresAt: expiresAt))
    }

    @Test mutating func anOfferMakesTheSessionsOwnersKnownAndAnEndingForgetsThem() {
        #expect(table.deliver(frame(.invitationReceived), to: phone, owner: "a") == .deliver)
        #expect(table.deliver(frame(.invitationReceived), to: tablet, owner: "a") == .deliver)
        #expect(table.owner(of: "i-x-1", for: phone) == "a")
        #expect(table.owner(of: "i-x-1", for: SessionID(9)) == nil)
        #expect(table.deliver(frame(.canceled), to: phone, owner: "a") == .deliver)
        #expect(table.owner(of: "i-x-1", for: phone) == nil)
        #expect(table.count == 1)
        #expect(table.deliver(frame(.canceled), to: tablet, owner: "a") == .deliver)
        #expect(table.count == 0)
    }

    @Test mutating func anEndingForASessionThatAlreadySawItEndIsNotGivenAgain() {
        _ = table.deliver(frame(.invitationReceived), to: phone, owner: "a")
        #expect(table.callerGone(node: "a", caller: "1001").count == 1)
        #expect(table.deliver(frame(.canceled), to: phone, owner: "a") == .alreadyEnded)
    }

    @Test mutating func aClosedSessionNamesTheNodesToTellOnce() {
        _ = table.deliver(frame(.invitationReceived, "i-x-1"), to: phone, owner: "a")
        _ = table.deliver(frame(.invitationReceived, "i-y-1"), to: phone, owner: "c")
        let closed = table.sessionClosed(phone)
        #expect(closed.map(\.owner) == ["a", "c"])
        #expect(closed.map(\.invitationId) == ["i-x-1", "i-y-1"])
        #expect(table.count == 0)
        #expect(table.sessionClosed(phone).isEmpty)
    }

    @Test mutating func onlyTheLeavingNodesInvitationsOfThatCallerEnd() {
        _ = table.deliver(frame(.invitationReceived, "i-x-1"), to: phone, owner: "a")
        _ = table.deliver(frame(.invitationReceived, "i-y-1"), to: phone, owner: "c")
        #expect(table.callerGone(node: "a", caller: "1009").isEmpty)
        let ended = table.callerGone(node: "a", caller: "1001")
        #expect(
            ended.map(\.1) == [
                .remoteInvitation(.init(invitationId: "i-x-1", callerId: "1001", state: .failure, reason: .peerOffline))
            ])
        #expect(table.owner(of: "i-y-1", for: phone) == "c")
    }

    @Test mutating func expiryWaitsForTheGraceAfterTheOffersExpiry() {
        _ = table.deliver(frame(.invitationReceived, expiresAt: 60_000), to: phone, owner: "a")
        #expect(table.expire(now: 69_999, graceMillis: 10_000).isEmpty)
        let expired = table.expire(now: 70_000, graceMillis: 10_000)
        #expect(expired.count == 1 && expired.first?.0 == phone)
        #expect(table.count == 0)
    }
}
