import CallAPI
import CallAPIServerTesting
import CallAPISignalClient
import CallAPITesting
import Foundation
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// Two CallAPI clients ring over the real server (loopback sockets) and then fall silent: their timers run on a
/// clock nobody moves, as if both apps hung, so neither sends a keep-alive, a retry or its own ring timeout. The
/// server's ledger sees the ring go unanswered past its window and ends the call for them: each client ends as a
/// ring timeout, and the call webhook says the server ended it.
@Suite struct AbandonedRingTests {
    let world = SimulatedRTCWorld(clock: SystemCallClock())
    /// The clients' timers: never advanced.
    let silentClients = ManualClock()

    func endpoint(_ user: UInt, on server: TestServer) async throws -> CallEndpoint {
        let signal = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
        try await signal.login(token: try await server.token("\(user)"))
        return try await .prepared(user, signal: signal, world: world, clock: silentClients)
    }

    /// A ringing call from 1001 to 1002 over a server on a test clock with call webhooks (ring window 60 s), handed
    /// to `body` with the call's id; everything is stopped after it.
    func ringing(
        _ body: (TestServer, TestClock, CallWebhookReceiver, CallEndpoint, CallEndpoint, String) async throws -> Void
    ) async throws {
        let clock = TestClock()
        let receiver = CallWebhookReceiver()
        try await receiver.start()
        let server = try await TestServer.start(clock: clock) { configuration in
            // The signaling connections stay up: their pings run on real time, not on the server's test clock.
            configuration.limits.idleTimeoutMillis = 600_000
            configuration.ledger.ringTimeoutSeconds = 60
            configuration.ledger.webhook = CallWebhookSettings(url: receiver.url, secret: nil)
        }
        let caller = try await endpoint(1001, on: server)
        let callee = try await endpoint(1002, on: server)
        let callerEvents = CallEventRecorder()
        caller.api.addListener(listener: callerEvents)
        do {
            try await caller.api.call(remoteUserId: 1002, callType: .video)
            try await callee.reaches(.calling, .remoteVideoCall)
            // The callee's acknowledgement is the last thing either side says: once the caller has it, the ledger
            // heard it before the clock moves (arriving later, it would restart the ring window there).
            _ = try await callerEvents.events.first(within: 5, "the caller's remoteUserRecvCall") {
                $0 == .remoteUserRecvCall
            }
            try await body(server, clock, receiver, caller, callee, caller.api.getCallId())
        } catch {
            Issue.record(error)
        }
        await caller.close()
        await callee.close()
        try await server.stop()
        await receiver.stop()
    }

    /// The `ended` webhook of `callId`, once the server's posts have settled.
    func endedPayload(of callId: String, _ server: TestServer, _ receiver: CallWebhookReceiver) async throws
        -> StoredCallEvent.Payload
    {
        try await CallWebhookEndToEndScenarios.settle(server)
        let ended = try #require(receiver.posts.first { $0.idempotencyKey == "\(callId):ended" })
        return try JSONDecoder().decode(StoredCallEvent.Payload.self, from: Data(ended.body.utf8))
    }

    @Test func aRingBothSidesFellSilentOnIsEndedByTheServerAsARingTimeoutOnBoth() async throws {
        try await ringing { server, clock, receiver, caller, callee, callId in
            // Just inside the window nothing happens: both still ring.
            clock.advance(seconds: 59)
            await server.tick()
            #expect(server.server.ledger?.liveCallCount == 1)
            #expect(caller.api.state == .calling && callee.api.state == .calling)

            clock.advance(seconds: 1)
            await server.tick()
            try await caller.reaches(.prepared, .remoteCallingTimeout)
            try await callee.reaches(.prepared, .remoteCallingTimeout)
            #expect(world.engine(userId: 1002).channel == nil)

            let payload = try await endedPayload(of: callId, server, receiver)
            #expect(payload.outcome == "missed")
            #expect(payload.serverEnded == true)
            #expect(payload.endReason == "noAnswer")
            #expect(payload.endedBy == nil)
            let record = try await server.server.calls(CallQuery(userId: "1001")).calls.first { $0.callId == callId }
            #expect(record?.outcome == .missed && record?.endReason == "noAnswer")
        }
    }

    /// A call the caller cancelled is not the server's to end: its webhook carries the caller as `endedBy` and no
    /// `serverEnded`.
    @Test func aCallACallerCancelledSaysWhoEndedItAndNotTheServer() async throws {
        try await ringing { server, _, receiver, caller, callee, callId in
            try await caller.api.cancelCall()
            try await callee.reaches(.prepared, .remoteCancelled)
            await server.tick()
            let payload = try await endedPayload(of: callId, server, receiver)
            #expect(payload.outcome == "cancelled")
            #expect(payload.endedBy == "1001")
            #expect(payload.serverEnded == nil)
        }
    }
}
