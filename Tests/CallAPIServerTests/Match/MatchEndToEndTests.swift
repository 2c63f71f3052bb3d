import CallAPI
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import CallAPITesting
import Foundation
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// Server-placed calls and the match queue between CallAPI endpoints whose signaling is a real server, over
/// loopback sockets, with three (or four) users (docs/match.md). Media is the in-process simulated world.
@Suite struct MatchEndToEndTests {
    /// One user: CallAPI over a signaling client, with a ``ServerCallAgent``.
    struct Endpoint {
        let user: UInt
        let api: CallApiImpl
        let signal: SignalClient
        let agent: ServerCallAgent
        let changes: AsyncStream<CallStateChange>
        let events: AsyncStream<SignalClientEvent>

        @discardableResult
        func reaches(_ state: CallStateType, _ reason: CallStateReason? = nil, within seconds: Double = 5) async throws
            -> CallStateChange
        {
            try await changes.first(within: seconds, "\(user) to reach \(state) \(reason.map { "\($0)" } ?? "")") {
                $0.state == state && (reason == nil || $0.reason == reason)
            }
        }

        func matched() async throws -> MatchFound {
            let event = try await events.first(within: 5, "\(user) to be matched") {
                if case .matched = $0 { true } else { false }
            }
            guard case .matched(let match) = event else { throw TimedOut(what: "matched, got \(event)") }
            return match
        }

        func close() async {
            agent.stop()
            await api.deinitialize()
            signal.logout()
        }
    }

    let world = SimulatedRTCWorld(clock: SystemCallClock())
    let admin = ["Authorization": "Bearer test-admin-key", "Content-Type": "application/json"]

    func endpoint(_ user: UInt, on server: TestServer, autoAccept: Bool = false) async throws -> Endpoint {
        let signal = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
        let api = CallApiImpl()
        // Made before login, as its documentation asks, so that no request of the server comes before it listens.
        let agent = ServerCallAgent(signal: signal, api: api, autoAcceptsMatchedCalls: autoAccept, logger: quietLogger)
        let events = signal.events()
        try await signal.login(token: try await server.token("\(user)"))
        api.initialize(
            config: CallConfig(
                userId: user, rtcEngine: world.engine(userId: user), signalClient: signal, clock: SystemCallClock()))
        let changes = api.stateChanges
        try await api.prepareForCall(
            prepareConfig: PrepareConfig(roomId: "room-\(user)", firstFrameWaittingDisabled: true))
        return Endpoint(user: user, api: api, signal: signal, agent: agent, changes: changes, events: events)
    }

    func place(_ body: String, on server: TestServer) async throws -> (Int, String) {
        try await httpRequest("\(server.httpBase)/v1/calls", method: "POST", headers: admin, body: body)
    }

    struct Placed: Decodable { var callId: String }

    @Test func aCallPlacedByTheBusinessServerConnectsWithTheReturnedCallIdAndIsInTheLedger() async throws {
        let server = try await TestServer.start()
        let alice = try await endpoint(1001, on: server)
        let bob = try await endpoint(1002, on: server)
        let carol = try await endpoint(1003, on: server)

        let (status, body) = try await place("{\"caller\":\"1001\",\"callee\":\"1002\",\"video\":false}", on: server)
        #expect(status == 201)
        let callId = try JSONDecoder().decode(Placed.self, from: Data(body.utf8)).callId
        try await alice.reaches(.calling, .localAudioCall)
        let ringing = try await bob.reaches(.calling, .remoteAudioCall)
        #expect(ringing.eventInfo[kCallId] == .string(callId))
        #expect(alice.api.getCallId() == callId)
        #expect(bob.api.getCallId() == callId)

        // Placed calls are not auto-accepted: bob's user answers.
        try await bob.api.accept(remoteUserId: alice.user)
        try await alice.reaches(.connected)
        try await bob.reaches(.connected)

        // Media may connect before bob's accept has crossed the server; a round trip on bob's session comes after it
        // (the hub handles a session's frames in order), so the ledger has the accept by then.
        _ = try await bob.signal.onlineUsers()
        // Bob is now in a call in the ledger: a call from carol to bob is refused busy, naming bob and the call.
        let (busy, busyBody) = try await place("{\"caller\":\"1003\",\"callee\":\"1002\"}", on: server)
        #expect(busy == 409)
        #expect(busyBody.contains("\"error\":\"busy\"") && busyBody.contains("\"user\":\"1002\""))
        #expect(busyBody.contains(callId))
        #expect(carol.api.state == .prepared)

        try await alice.api.hangup(remoteUserId: bob.user)
        try await bob.reaches(.prepared, .remoteHangup)
        // The ledger ended the call when the hub relayed the hangup, before bob could read it.
        let record = try #require(
            try await server.server.calls(CallQuery(userId: "1001", limit: 10)).calls.first { $0.callId == callId })
        #expect(record.outcome == .completed)
        #expect(record.caller == "1001" && record.callee == "1002")
        #expect(record.media == .audio)
        for endpoint in [alice, bob, carol] { await endpoint.close() }
        try await server.stop()
    }

    @Test func placingACallForAnOfflineUserFailsNamingTheUser() async throws {
        let server = try await TestServer.start()
        let alice = try await endpoint(1001, on: server)
        let (offline, body) = try await place("{\"caller\":\"1001\",\"callee\":\"1009\"}", on: server)
        #expect(offline == 404)
        #expect(body.contains("\"error\":\"offline\"") && body.contains("\"user\":\"1009\""))
        let (callerOffline, callerBody) = try await place("{\"caller\":\"1008\",\"callee\":\"1001\"}", on: server)
        #expect(callerOffline == 404 && callerBody.contains("\"user\":\"1008\""))
        let (same, _) = try await place("{\"caller\":\"1001\",\"callee\":\"1001\"}", on: server)
        #expect(same == 400)
        let (bad, _) = try await place("{\"caller\":\"1001\"}", on: server)
        #expect(bad == 400)
        let (unauthorized, _) = try await httpRequest(
            "\(server.httpBase)/v1/calls", method: "POST", body: "{\"caller\":\"1001\",\"callee\":\"1002\"}")
        #expect(unauthorized == 401)
        #expect(alice.api.state == .prepared)
        await alice.close()
        try await server.stop()
    }

    @Test func aPlacedCallItsCallerNeverMakesIsRecordedFailedWhenTheWindowEnds() async throws {
        let clock = TestClock()
        let server = try await TestServer.start(clock: clock)
        // A client that does not act on place_call (a raw socket) stands for one that cannot place the call.
        let alice = try await server.loggedIn("1001")
        let bob = try await server.loggedIn("1002")
        let (status, body) = try await place("{\"caller\":\"1001\",\"callee\":\"1002\"}", on: server)
        #expect(status == 201)
        let callId = try JSONDecoder().decode(Placed.self, from: Data(body.utf8)).callId
        let frame = try await alice.frame { if case .placeCall = $0 { true } else { false } }
        #expect(frame == .placeCall(.init(callId: callId, callee: "1002", video: true)))
        clock.advance(millis: MatchLimits().placeWindowMillis)
        await server.tick()
        let record = try #require(
            try await server.server.calls(CallQuery(userId: "1001", limit: 10)).calls.first { $0.callId == callId })
        #expect(record.outcome == .failed)
        #expect(record.endReason == "notPlaced")
        alice.close()
        bob.close()
        try await server.stop()
    }

    @Test func threeUsersMatchThePairConnectsWithAutoAcceptAndTheThirdWaitsForAFourth() async throws {
        let server = try await TestServer.start()
        let alice = try await endpoint(1001, on: server)
        let bob = try await endpoint(1002, on: server, autoAccept: true)
        let carol = try await endpoint(1003, on: server, autoAccept: true)

        #expect(try await alice.signal.enterMatchQueue(tags: ["paris", "chess"]) == ["paris", "chess"])
        #expect(try await bob.signal.enterMatchQueue(tags: ["rome"]) == ["rome"])
        try await carol.signal.enterMatchQueue(tags: ["chess"])
        let alicesMatch = try await alice.matched()
        let carolsMatch = try await carol.matched()
        #expect(alicesMatch.role == .caller && alicesMatch.peerId == "1003" && alicesMatch.tag == "chess")
        #expect(carolsMatch.role == .callee && carolsMatch.peerId == "1001")
        #expect(alicesMatch.callId == carolsMatch.callId)

        // Alice's agent places the call with the match's id; carol's accepts it without her user.
        try await alice.reaches(.connected)
        try await carol.reaches(.connected)
        #expect(alice.api.getCallId() == alicesMatch.callId)
        #expect(carol.api.getCallId() == alicesMatch.callId)
        #expect(server.server.matchWaitingCount == 1, "bob waits")
        #expect(bob.api.state == .prepared)

        let dave = try await endpoint(1004, on: server)
        try await dave.signal.enterMatchQueue(tags: ["rome", "paris"])
        let bobsMatch = try await bob.matched()
        #expect(bobsMatch.role == .caller && bobsMatch.peerId == "1004" && bobsMatch.tag == "rome")
        try await bob.reaches(.calling, .localVideoCall)
        // Dave did not opt in: his call rings until his user answers.
        try await dave.reaches(.calling, .remoteVideoCall)
        try await dave.api.accept(remoteUserId: bob.user)
        try await bob.reaches(.connected)
        #expect(server.server.matchWaitingCount == 0)

        try await alice.api.hangup(remoteUserId: carol.user)
        try await carol.reaches(.prepared, .remoteHangup)
        try await dave.api.hangup(remoteUserId: bob.user)
        try await bob.reaches(.prepared, .remoteHangup)
        for endpoint in [alice, bob, carol, dave] { await endpoint.close() }
        try await server.stop()
    }

    @Test func leavingTheQueueOrGoingOfflineMeansNoMatch() async throws {
        let server = try await TestServer.start()
        let alice = try await endpoint(1001, on: server)
        let bob = try await endpoint(1002, on: server)
        let carol = try await endpoint(1003, on: server)
        try await alice.signal.enterMatchQueue(tags: ["chess"])
        try await alice.signal.leaveMatchQueue()
        try await bob.signal.enterMatchQueue(tags: ["chess"])
        #expect(server.server.matchWaitingCount == 1)
        // The hub takes bob out of the queue in the same step as it tells carol he went offline.
        let presence = carol.signal.events()
        try await carol.signal.subscribePresence()
        bob.signal.logout()
        _ = try await presence.first(within: 5, "bob to go offline") {
            $0 == .presenceChanged(userId: "1002", online: false)
        }
        #expect(server.server.matchWaitingCount == 0)
        try await carol.signal.enterMatchQueue(tags: ["chess"])
        #expect(server.server.matchWaitingCount == 1)
        for endpoint in [alice, bob, carol] { await endpoint.close() }
        try await server.stop()
    }

    @Test func clientsCannotSendTheServersPlaceCallOrMatchedFrames() async throws {
        let server = try await TestServer.start()
        let mallory = try await server.loggedIn("1666")
        let victim = try await server.loggedIn("1001")
        mallory.sendText(
            "{\"type\":\"place_call\",\"id\":3,\"callId\":\"x\",\"callee\":\"1002\",\"video\":true,\"placedBy\":\"server\"}"
        )
        let refused = try await mallory.frame()
        guard case .error(let error) = refused else { throw UnexpectedFrame(frame: refused) }
        #expect(error.code == .unknownType && error.id == 3)
        mallory.sendText(
            "{\"type\":\"matched\",\"id\":4,\"matchId\":\"m\",\"peer\":\"1666\",\"tag\":\"t\",\"callId\":\"x\",\"role\":\"callee\"}"
        )
        let alsoRefused = try await mallory.frame()
        guard case .error(let second) = alsoRefused else { throw UnexpectedFrame(frame: alsoRefused) }
        #expect(second.code == .unknownType)
        // Nothing reached the user mallory aimed at.
        victim.send(.ping(.init(id: 9)))
        let next = try await victim.frame()
        guard case .pong(let pong) = next else { throw UnexpectedFrame(frame: next) }
        #expect(pong.id == 9)
        mallory.close()
        victim.close()
        try await server.stop()
    }
}
