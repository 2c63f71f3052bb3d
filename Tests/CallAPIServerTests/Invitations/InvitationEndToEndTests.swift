import CallAPIServerTesting
import CallAPISignalProtocol
import Testing

@testable import CallAPISignalClient

/// Invitations between Swift clients over a real server's sockets. The server's clock is a ``TestClock`` moved by
/// hand and its windows run only on ``TestServer/tick()``, so expiry needs no waiting.
@Suite struct InvitationEndToEndTests {
    let clock = TestClock()

    func client(_ server: TestServer) -> SignalClient {
        var configuration = SignalClientConfiguration(url: "127.0.0.1:\(server.port)")
        configuration.backoffBaseMillis = 50
        configuration.backoffMaxMillis = 200
        return SignalClient(configuration: configuration, logger: quietLogger)
    }

    /// A logged-in client for `user` and its invitation events.
    func loggedIn(_ user: String, on server: TestServer) async throws -> (SignalClient, AsyncStream<InvitationEvent>) {
        let signal = client(server)
        let events = signal.invitationEvents()
        try await signal.login(token: try await server.token(user))
        return (signal, events)
    }

    @Test func anAcceptedInvitationReachesBothSidesWithTheResponse() async throws {
        let server = try await TestServer.start(clock: clock)
        let (alice, aliceEvents) = try await loggedIn("1001", on: server)
        let (bob, bobEvents) = try await loggedIn("1002", on: server)

        let sent = try await alice.sendInvitation(to: "1002", content: "tutoring at 5?", channelId: "lesson-12")
        #expect(sent.state == .sentToRemote)
        let arrived = try await bobEvents.first(within: 5, "the invitation") { _ in true }
        guard case .remoteInvitationReceived(let invitation) = arrived else {
            throw TimedOut(what: "remoteInvitationReceived, got \(arrived)")
        }
        #expect(invitation.callerId == "1001")
        #expect(invitation.content == "tutoring at 5?")
        #expect(invitation.channelId == "lesson-12")
        let receipt = try await aliceEvents.first(within: 5, "the receipt") { _ in true }
        #expect(receipt == .localInvitationReceivedByPeer(withState(sent, .receivedByRemote)))

        let accepting = try await bob.acceptInvitation(invitation, response: "see you")
        #expect(accepting.state == .acceptSentToLocal)
        let accepted = try await aliceEvents.first(within: 5, "the accept") { _ in true }
        guard case .localInvitationAccepted(let done, let response) = accepted else {
            throw TimedOut(what: "localInvitationAccepted, got \(accepted)")
        }
        #expect(response == "see you")
        #expect(done.state == .acceptedByRemote)
        let final = try await bobEvents.first(within: 5, "the final accept") { _ in true }
        guard case .remoteInvitationAccepted(let bobsView) = final else {
            throw TimedOut(what: "remoteInvitationAccepted, got \(final)")
        }
        #expect(bobsView.state == .accepted)
        #expect(bobsView.response == "see you")
        alice.logout()
        bob.logout()
        try await server.stop()
    }

    @Test func refusalsCancelsAndApiErrorsOverARealServer() async throws {
        let server = try await TestServer.start(clock: clock)
        let (alice, aliceEvents) = try await loggedIn("1001", on: server)
        let (bob, bobEvents) = try await loggedIn("1002", on: server)

        _ = try await alice.sendInvitation(to: "1002")
        guard case .remoteInvitationReceived(let first) = try await bobEvents.first(within: 5, where: { _ in true })
        else { throw TimedOut(what: "the first invitation") }
        let refused = try await bob.refuseInvitation(first, response: "not now")
        #expect(refused.state == .refused)
        let refusal = try await aliceEvents.first(within: 5, "the refusal") {
            if case .localInvitationRefused = $0 { true } else { false }
        }
        guard case .localInvitationRefused(let refusedByBob, let response) = refusal else {
            throw TimedOut(what: "localInvitationRefused, got \(refusal)")
        }
        #expect(response == "not now")
        #expect(refusedByBob.state == .refusedByRemote)
        await #expect(throws: InvitationApiCallError.self) { try await bob.acceptInvitation(first) }

        let second = try await alice.sendInvitation(to: "1002")
        _ = try await bobEvents.first(within: 5, "the second invitation") {
            if case .remoteInvitationReceived = $0 { true } else { false }
        }
        let canceled = try await alice.cancelInvitation(second)
        #expect(canceled.state == .canceled)
        let bobHears = try await bobEvents.first(within: 5, "the cancel") { _ in true }
        guard case .remoteInvitationCanceled(let gone) = bobHears else {
            throw TimedOut(what: "remoteInvitationCanceled, got \(bobHears)")
        }
        #expect(gone.invitationId == second.invitationId)

        do {
            _ = try await alice.sendInvitation(to: "1001")
            Issue.record("inviting yourself succeeded")
        } catch let error as InvitationApiCallError {
            guard case .invalidArgument = error else { throw error }
        }
        do {
            try await alice.cancelInvitation(second)
            Issue.record("cancelling twice succeeded")
        } catch let error as InvitationApiCallError {
            guard case .alreadyEnd = error else { throw error }
        }
        alice.logout()
        bob.logout()
        try await server.stop()
    }

    @Test func theCalleeGoingOfflineMidInvitationFailsItForBothSides() async throws {
        let server = try await TestServer.start(clock: clock)
        let (alice, aliceEvents) = try await loggedIn("1001", on: server)
        let (bob, bobEvents) = try await loggedIn("1002", on: server)

        let offline = try await alice.sendInvitation(to: "1003")
        #expect(offline.state == .failure(.peerOffline))

        let sent = try await alice.sendInvitation(to: "1002")
        _ = try await bobEvents.first(within: 5, "the invitation") { _ in true }
        _ = try await aliceEvents.first(within: 5, "the receipt") {
            if case .localInvitationReceivedByPeer = $0 { true } else { false }
        }
        bob.logout()
        let bobsEnd = try await bobEvents.first(within: 5, "bob's own ending") { _ in true }
        guard case .remoteInvitationFailure(_, .peerOffline) = bobsEnd else {
            throw TimedOut(what: "remoteInvitationFailure(peerOffline), got \(bobsEnd)")
        }
        let alicesEnd = try await aliceEvents.first(within: 5, "alice's ending") {
            if case .localInvitationFailure = $0 { true } else { false }
        }
        #expect(alicesEnd == .localInvitationFailure(withState(sent, .failure(.peerOffline)), .peerOffline))
        alice.logout()
        try await server.stop()
    }

    @Test func anUnansweredInvitationExpiresOnBothSidesWhenTheServersWindowEnds() async throws {
        // The default 60 s expiry is longer than the default idle timeout, which the frozen clock would trip.
        let server = try await TestServer.start(clock: clock) { $0.limits.idleTimeoutMillis = 300_000 }
        let (alice, aliceEvents) = try await loggedIn("1001", on: server)
        let (bob, bobEvents) = try await loggedIn("1002", on: server)
        _ = try await alice.sendInvitation(to: "1002")
        _ = try await aliceEvents.first(within: 5, "the receipt") { _ in true }
        clock.advance(seconds: 60)
        await server.tick()
        let alicesEnd = try await aliceEvents.first(within: 5, "alice's expiry") { _ in true }
        guard case .localInvitationFailure(_, .invitationExpire) = alicesEnd else {
            throw TimedOut(what: "invitationExpire, got \(alicesEnd)")
        }
        let bobsEnd = try await bobEvents.first(within: 5, "bob's expiry") {
            if case .remoteInvitationFailure = $0 { true } else { false }
        }
        guard case .remoteInvitationFailure(_, .invitationExpire) = bobsEnd else {
            throw TimedOut(what: "invitationExpire, got \(bobsEnd)")
        }
        alice.logout()
        bob.logout()
        try await server.stop()
    }

    @Test func anAcceptTheCallerNeverAcknowledgesFailsWithAcceptFailure() async throws {
        let server = try await TestServer.start(clock: clock)
        // A caller on a raw socket, which does not acknowledge accepts as the Swift client does.
        let caller = try await server.loggedIn("1001")
        let (bob, bobEvents) = try await loggedIn("1002", on: server)
        caller.send(.invite(.init(id: 2, to: "1002", content: "hello")))
        guard
            case .remoteInvitationReceived(let invitation) = try await bobEvents.first(within: 5, where: { _ in true })
        else { throw TimedOut(what: "the invitation") }
        _ = try await bob.acceptInvitation(invitation, response: "yes")
        let pending = try await caller.frame {
            if case .localInvitation(let f) = $0 { f.state == .acceptPending } else { false }
        }
        guard case .localInvitation(let frame) = pending else { throw TimedOut(what: "accept_pending") }
        #expect(frame.response == "yes")
        clock.advance(seconds: 10)
        await server.tick()
        let end = try await bobEvents.first(within: 5, "the accept failure") { _ in true }
        guard case .remoteInvitationFailure(let failed, .acceptFailure) = end else {
            throw TimedOut(what: "acceptFailure, got \(end)")
        }
        #expect(failed.state == .failure(.acceptFailure))
        let callersEnd = try await caller.frame {
            if case .localInvitation(let f) = $0 { f.state == .failure } else { false }
        }
        guard case .localInvitation(let callerFrame) = callersEnd else { throw TimedOut(what: "the caller's end") }
        #expect(callerFrame.reason == .acceptFailure)
        caller.close()
        bob.logout()
        try await server.stop()
    }

    private func withState(_ invitation: LocalInvitation, _ state: LocalInvitationState) -> LocalInvitation {
        var copy = invitation
        copy.state = state
        return copy
    }
}
