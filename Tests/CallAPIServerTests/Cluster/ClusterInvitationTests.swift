import CallAPIServer
import CallAPIServerTesting
import CallAPISignalProtocol
import Foundation
import Testing

@testable import CallAPISignalClient

/// Invitations between SignalClients on two nodes of a cluster, over real sockets and the real PostgreSQL
/// (docs/invitations.md, "In a cluster"): the caller's node arbitrates, the callee's node passes the steps.
@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct ClusterInvitationTests {
    func loggedIn(_ user: String, on server: TestServer) async throws -> (SignalClient, AsyncStream<InvitationEvent>) {
        var configuration = SignalClientConfiguration(url: server.url)
        configuration.backoffBaseMillis = 50
        configuration.backoffMaxMillis = 200
        let signal = SignalClient(configuration: configuration, logger: quietLogger)
        let events = signal.invitationEvents()
        try await signal.login(token: try await server.token(user))
        return (signal, events)
    }

    /// Two nodes; the caller 2001 on the first, the callee 2002 on the second with two devices, seen by the first.
    func twoNodes() async throws -> (
        [TestServer], caller: (SignalClient, AsyncStream<InvitationEvent>),
        callee: [(SignalClient, AsyncStream<InvitationEvent>)]
    ) {
        let (_, servers) = try await ClusterEndToEndTests.nodes(["ia", "ib"])
        let caller = try await loggedIn("2001", on: servers[0])
        let phone = try await loggedIn("2002", on: servers[1])
        let tablet = try await loggedIn("2002", on: servers[1])
        // Both devices' sessions are in the rows the first node read (each login writes its own row).
        try await withTimeout(10, "the first node to see both of the callee's sessions") {
            while !servers[0].server.metricsText().contains("callapi_cluster_remote_sessions 2") {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        return (servers, caller, [phone, tablet])
    }

    @Test func anInvitationToACalleeOnAnotherNodeReachesEveryDeviceAndIsAcceptedByOne() async throws {
        let (servers, (alice, aliceEvents), callee) = try await twoNodes()
        let sent = try await alice.sendInvitation(to: "2002", content: "co-host?", channelId: "live-3")
        #expect(sent.state == .sentToRemote)

        var offers: [RemoteInvitation] = []
        for (_, events) in callee {
            let arrived = try await events.first(within: 5, "the invitation on the other node") { _ in true }
            guard case .remoteInvitationReceived(let invitation) = arrived else {
                throw TimedOut(what: "remoteInvitationReceived, got \(arrived)")
            }
            #expect(invitation.callerId == "2001" && invitation.content == "co-host?")
            #expect(invitation.invitationId == sent.invitationId)
            offers.append(invitation)
        }
        let receipt = try await aliceEvents.first(within: 5, "the receipt from the other node") { _ in true }
        guard case .localInvitationReceivedByPeer = receipt else {
            throw TimedOut(what: "localInvitationReceivedByPeer, got \(receipt)")
        }

        let accepting = try await callee[0].0.acceptInvitation(offers[0], response: "on my way")
        #expect(accepting.state == .acceptSentToLocal)
        let accepted = try await aliceEvents.first(within: 5, "the accept from the other node") { _ in true }
        guard case .localInvitationAccepted(let done, let response) = accepted else {
            throw TimedOut(what: "localInvitationAccepted, got \(accepted)")
        }
        #expect(done.state == .acceptedByRemote && response == "on my way")
        for (_, events) in callee {
            let final = try await events.first(within: 5, "the final accept on each device") {
                if case .remoteInvitationAccepted = $0 { true } else { false }
            }
            guard case .remoteInvitationAccepted(let view) = final else { throw TimedOut(what: "accepted") }
            #expect(view.response == "on my way")
        }
        alice.logout()
        for (signal, _) in callee { signal.logout() }
        for server in servers { try await server.stop() }
    }

    @Test func theCallersNodeStoppingEndsTheInvitationOnTheCalleesDevices() async throws {
        let (servers, (alice, _), callee) = try await twoNodes()
        let sent = try await alice.sendInvitation(to: "2002")
        #expect(sent.state == .sentToRemote)
        for (_, events) in callee {
            _ = try await events.first(within: 5, "the invitation") {
                if case .remoteInvitationReceived = $0 { true } else { false }
            }
        }
        try await servers[0].stop()
        for (_, events) in callee {
            let ended = try await events.first(within: 10, "the invitation's end on each device") { _ in true }
            guard case .remoteInvitationFailure(_, let reason) = ended else {
                throw TimedOut(what: "remoteInvitationFailure, got \(ended)")
            }
            #expect(reason == .peerOffline)
        }
        alice.logout()
        for (signal, _) in callee { signal.logout() }
        try await servers[1].stop()
    }
}
