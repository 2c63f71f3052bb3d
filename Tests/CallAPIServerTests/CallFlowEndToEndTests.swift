import CallAPI
import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import CallAPITesting
import Testing

/// The core call flows between CallAPI endpoints whose signaling is the real server, over loopback sockets.
/// Media is the in-process simulated world, with first-frame waiting disabled. Each flow also checks what the
/// server's call ledger (on by default, in memory) recorded for it: CallAPI's own messages, not hand-written ones.
@Suite struct CallFlowEndToEndTests {
    typealias Endpoint = CallEndpoint

    let world = SimulatedRTCWorld(clock: SystemCallClock())

    func endpoint(_ user: UInt, on server: TestServer, ringTimeoutMillis: UInt64 = 15_000) async throws -> Endpoint {
        let signal = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
        try await signal.login(token: try await server.token("\(user)"))
        return try await .prepared(user, signal: signal, world: world, ringTimeoutMillis: ringTimeoutMillis)
    }

    /// The ledger's record of the call `callId`, or of the caller's latest call (asked after the server relayed the
    /// message that ended it: the ledger writes every ended call before it answers).
    func ledgerRecord(of callId: String?, caller: Endpoint, on server: TestServer) async throws -> CallRecord {
        let page = try await server.server.calls(CallQuery(userId: "\(caller.user)", limit: 20))
        return try #require(
            page.calls.first { callId == nil || $0.callId == callId },
            "the ledger has no record of \(callId ?? "a call")")
    }

    /// Caller `a` calls `b`; both ring.
    func ring(_ a: Endpoint, _ b: Endpoint, type: CallType = .video) async throws {
        try await a.api.call(remoteUserId: b.user, callType: type)
        try await a.reaches(.calling, type == .video ? .localVideoCall : .localAudioCall)
        try await b.reaches(.calling, type == .video ? .remoteVideoCall : .remoteAudioCall)
    }

    /// An app woken by a push logs in, and the server delivers the held call at once, before the app has
    /// initialized and prepared CallAPI: the call rings once it has, and is answered as usual.
    @Test func aCallThatArrivesBeforeTheCalleeInitializesRingsOnceItDoes() async throws {
        let server = try await TestServer.start()
        let caller = try await endpoint(1001, on: server)
        let signal = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
        try await signal.login(token: try await server.token("1002"))
        let arrivals = signal.events()
        try await caller.api.call(remoteUserId: 1002, callType: .video)
        _ = try await arrivals.first(within: 5, "the call at the callee's client") {
            if case .message = $0 { return true }
            return false
        }
        let api = CallApiImpl()
        let changes = api.stateChanges
        api.initialize(
            config: CallConfig(
                userId: 1002, rtcEngine: world.engine(userId: 1002), signalClient: signal, clock: SystemCallClock()))
        try await api.prepareForCall(
            prepareConfig: PrepareConfig(roomId: "room-1002", firstFrameWaittingDisabled: true))
        let callee = Endpoint(user: 1002, api: api, signal: signal, changes: changes)
        try await callee.reaches(.calling, .remoteVideoCall)
        try await callee.api.accept(remoteUserId: caller.user)
        try await caller.reaches(.connected)
        try await callee.reaches(.connected)
        await caller.close()
        await callee.close()
        try await server.stop()
    }

    @Test(arguments: [true, false])
    func videoCallAcceptedThenHungUp(byCaller: Bool) async throws {
        let server = try await TestServer.start()
        let caller = try await endpoint(1001, on: server)
        let callee = try await endpoint(1002, on: server)
        try await ring(caller, callee)
        let callId = caller.api.getCallId()
        try await callee.api.accept(remoteUserId: caller.user)
        try await caller.reaches(.connected)
        try await callee.reaches(.connected)
        let (hanger, other) = byCaller ? (caller, callee) : (callee, caller)
        try await hanger.api.hangup(remoteUserId: other.user)
        try await hanger.reaches(.prepared, .localHangup)
        try await other.reaches(.prepared, .remoteHangup)
        let record = try await ledgerRecord(of: callId, caller: caller, on: server)
        #expect(record.outcome == .completed)
        #expect(record.caller == "1001" && record.callee == "1002" && record.media == .video)
        #expect(record.endedBy == "\(hanger.user)", "\(record)")
        #expect(record.acceptedAt != nil && record.rangAt != nil)
        #expect(Set(record.devices.map(\.userId)) == ["1001", "1002"])
        await caller.close()
        await callee.close()
        try await server.stop()
    }

    @Test func rejectedCall() async throws {
        let server = try await TestServer.start()
        let caller = try await endpoint(1001, on: server)
        let callee = try await endpoint(1002, on: server)
        try await ring(caller, callee, type: .audio)
        let callId = caller.api.getCallId()
        try await callee.api.reject(remoteUserId: caller.user, reason: "in a meeting")
        try await callee.reaches(.prepared, .localRejected)
        let change = try await caller.reaches(.prepared, .remoteRejected)
        #expect(change.eventInfo["rejectReason"] == .string("in a meeting"))
        let record = try await ledgerRecord(of: callId, caller: caller, on: server)
        #expect(record.outcome == .rejected && record.endReason == "calleeRejected")
        #expect(record.media == .audio && record.endedBy == "1002" && record.acceptedAt == nil)
        await caller.close()
        await callee.close()
        try await server.stop()
    }

    @Test func cancelledCall() async throws {
        let server = try await TestServer.start()
        let caller = try await endpoint(1001, on: server)
        let callee = try await endpoint(1002, on: server)
        try await ring(caller, callee)
        let callId = caller.api.getCallId()
        try await caller.api.cancelCall()
        try await caller.reaches(.prepared, .localCancelled)
        try await callee.reaches(.prepared, .remoteCancelled)
        let record = try await ledgerRecord(of: callId, caller: caller, on: server)
        #expect(record.outcome == .cancelled && record.endedBy == "1001" && record.durationMillis == 0)
        await caller.close()
        await callee.close()
        try await server.stop()
    }

    /// A real 300 ms ring timer: a manual clock would also jump the core's retry and keep-alive timers, which
    /// race with the real socket's answers.
    @Test func ringTimeout() async throws {
        let server = try await TestServer.start()
        let caller = try await endpoint(1001, on: server, ringTimeoutMillis: 300)
        let callee = try await endpoint(1002, on: server)
        try await ring(caller, callee)
        try await caller.reaches(.prepared, .callingTimeout)
        try await callee.reaches(.prepared, .remoteCallingTimeout)
        // The only call on this server (its id may be gone from the caller already: the ring timer is short).
        let record = try await ledgerRecord(of: nil, caller: caller, on: server)
        #expect(record.outcome == .missed && record.endReason == "callerTimeout" && record.callee == "1002")
        // A missed call is what the callee asks for at login.
        let missed = try await callee.signal.callHistory(missedOnly: true, since: nil, limit: 10, cursor: nil)
        #expect(missed.calls.map(\.callId) == [record.callId])
        await caller.close()
        await callee.close()
        try await server.stop()
    }

    @Test func busyCalleeRejectsAThirdUser() async throws {
        let server = try await TestServer.start()
        let caller = try await endpoint(1001, on: server)
        let callee = try await endpoint(1002, on: server)
        let third = try await endpoint(1003, on: server)
        try await ring(caller, callee)
        try await callee.api.accept(remoteUserId: caller.user)
        try await callee.reaches(.connected)
        try await third.api.call(remoteUserId: callee.user, callType: .video)
        let busy = try await third.reaches(.prepared, .remoteCallBusy)
        #expect(busy.eventInfo["rejectReason"] == .string("The user is currently busy"))
        #expect(callee.api.state == .connected)
        // The third user's only call (its id is gone from the client once the busy reject arrived).
        let record = try await ledgerRecord(of: nil, caller: third, on: server)
        #expect(record.outcome == .busy && record.endReason == "calleeBusy" && record.callee == "1002")
        await caller.close()
        await callee.close()
        await third.close()
        try await server.stop()
    }

    @Test func callingAnOfflineUserFailsWithTheServersReason() async throws {
        let server = try await TestServer.start()
        let caller = try await endpoint(1001, on: server)
        await #expect(throws: (any Error).self) { try await caller.api.call(remoteUserId: 1009, callType: .video) }
        await caller.close()
        try await server.stop()
    }

    @Test func forgedHangupFromAnotherUserIsIgnored() async throws {
        let server = try await TestServer.start()
        let caller = try await endpoint(1001, on: server)
        let callee = try await endpoint(1002, on: server)
        let mallory = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
        try await mallory.login(token: try await server.token("1003"))
        try await ring(caller, callee)
        try await callee.api.accept(remoteUserId: caller.user)
        try await callee.reaches(.connected)
        // 1003 sends a hangup whose body claims to be from 1001, for the live call.
        let forged =
            "{\"message_action\":4,\"message_version\":\"1.0\",\"message_timestamp\":0,\"messageId\":99,"
            + "\"fromUserId\":1001,\"callId\":\"\(callee.api.getCallId())\"}"
        _ = try await mallory.send(to: "1002", body: forged)
        // The call survives: a real hangup is still the next change the callee sees.
        try await caller.api.hangup(remoteUserId: callee.user)
        let next = try await callee.changes.first(within: 5, "the next change") { _ in true }
        #expect(next.reason == .remoteHangup)
        mallory.logout()
        await caller.close()
        await callee.close()
        try await server.stop()
    }

    @Test func afterAServerRestartClientsReconnectAndCanCallAgain() async throws {
        let first = try await TestServer.start()
        let port = first.port
        let caller = try await endpoint(1001, on: first)
        let callee = try await endpoint(1002, on: first)
        let callerStates = caller.signal.stateUpdates()
        let calleeStates = callee.signal.stateUpdates()
        try await first.stop()
        _ = try await callerStates.first(within: 5, "caller reconnecting") { !$0.isConnected }
        _ = try await calleeStates.first(within: 5, "callee reconnecting") { !$0.isConnected }
        let second = try await TestServer.start(port: port)
        _ = try await callerStates.first(within: 5, "caller back") { $0.isConnected }
        _ = try await calleeStates.first(within: 5, "callee back") { $0.isConnected }
        try await ring(caller, callee)
        try await callee.api.accept(remoteUserId: caller.user)
        try await caller.reaches(.connected)
        try await caller.api.hangup(remoteUserId: callee.user)
        try await callee.reaches(.prepared, .remoteHangup)
        await caller.close()
        await callee.close()
        try await second.stop()
    }
}
