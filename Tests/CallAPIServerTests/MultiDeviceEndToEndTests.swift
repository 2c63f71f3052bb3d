import CallAPI
import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import CallAPITesting
import Testing

/// User 1002 logged in on two devices, A and B, called by 1001, with the real server over loopback sockets: the
/// server fans the call out to both sessions and copies each device's answer to the other.
@Suite struct MultiDeviceEndToEndTests {
    typealias Endpoint = CallFlowEndToEndTests.Endpoint

    let world = SimulatedRTCWorld(clock: SystemCallClock())
    /// The endpoints' timers (ring timeout, retries, keep-alives) run on this clock, which moves only when a test
    /// advances it: the sockets are real, and on a loaded machine a real-time ring timeout could end a call before
    /// the test's accept arrived.
    let clock = ManualClock()
    static let ringTimeoutMillis: UInt64 = 1_000

    func device(_ user: UInt, _ index: Int, on server: TestServer) async throws -> Endpoint {
        let signal = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
        try await signal.login(token: try await server.token("\(user)"))
        let api = CallApiImpl(deviceId: "\(user)-\(index)")
        api.initialize(
            config: CallConfig(
                userId: user, rtcEngine: world.engine(userId: user, device: index), signalClient: signal,
                clock: clock))
        let changes = api.stateChanges
        try await api.prepareForCall(
            prepareConfig: PrepareConfig(
                roomId: "room-\(user)-\(index)", callTimeoutMillisecond: Self.ringTimeoutMillis,
                firstFrameWaittingDisabled: true))
        return Endpoint(user: user, api: api, signal: signal, changes: changes)
    }

    /// 1001 calls 1002; both of 1002's devices ring.
    func ringBoth() async throws -> (server: TestServer, caller: Endpoint, a: Endpoint, b: Endpoint) {
        let server = try await TestServer.start()
        let caller = try await device(1001, 0, on: server)
        let a = try await device(1002, 0, on: server)
        let b = try await device(1002, 1, on: server)
        try await caller.api.call(remoteUserId: 1002, callType: .video)
        try await a.reaches(.calling, .remoteVideoCall)
        try await b.reaches(.calling, .remoteVideoCall)
        return (server, caller, a, b)
    }

    func close(_ server: TestServer, _ endpoints: Endpoint...) async throws {
        for endpoint in endpoints { await endpoint.close() }
        try await server.stop()
    }

    @Test func acceptOnAStopsBWithAnsweredElsewhereAndTheCallOutlivesBsRingTimeout() async throws {
        let (server, caller, a, b) = try await ringBoth()
        try await a.api.accept(remoteUserId: 1001)
        try await caller.reaches(.connected)
        try await a.reaches(.connected)
        try await b.reaches(.prepared, .answeredElsewhere)
        #expect(world.engine(userId: 1002, device: 1).channel == nil)
        // Nothing can end the call now: every timer due by half a second past the ring timeout runs, and the call
        // stays up.
        clock.advance(byMillis: Int64(Self.ringTimeoutMillis) + 500)
        #expect(caller.api.state == .connected)
        #expect(a.api.state == .connected)
        // The ledger saw the whole call through the caller's settled notice: one completed call, B answered
        // elsewhere.
        let callId = caller.api.getCallId()
        try await caller.api.hangup(remoteUserId: 1002)
        try await a.reaches(.prepared, .remoteHangup)
        let page = try await server.server.calls(CallQuery(userId: "1001", limit: 10))
        let record = try #require(page.calls.first { $0.callId == callId })
        #expect(record.outcome == .completed && record.endedBy == "1001")
        #expect(record.devices.first { $0.deviceId == "1002-1" }?.ending == "answeredElsewhere")
        try await close(server, caller, a, b)
    }

    @Test func aCallNobodyAnswersEndsOnTheCallerAndBothDevicesAtTheRingTimeout() async throws {
        let (server, caller, a, b) = try await ringBoth()
        clock.advance(byMillis: Int64(Self.ringTimeoutMillis))
        try await caller.reaches(.prepared, .callingTimeout)
        try await a.reaches(.prepared)
        try await b.reaches(.prepared)
        #expect(world.engine(userId: 1002, device: 0).channel == nil)
        #expect(world.engine(userId: 1002, device: 1).channel == nil)
        try await close(server, caller, a, b)
    }

    @Test func aRejectFromBAfterAAnsweredIsIgnoredByTheCaller() async throws {
        let (server, caller, a, b) = try await ringBoth()
        let callId = caller.api.getCallId()
        try await a.api.accept(remoteUserId: 1001)
        try await caller.reaches(.connected)
        // B's reject, as B would have sent it had it not heard of A's accept yet.
        let reject = CallMessage(
            action: .reject, timestamp: 0, messageId: 77, fromUserId: 1002, callId: callId, rejectReason: "no")
        var late = reject
        late.deviceId = b.api.deviceId
        _ = try await b.signal.send(to: "1001", body: late.encoded())
        // The caller answers it with its notice again; A ignores the notice naming itself. A hangup is still the
        // next change the caller sees.
        try await a.api.hangup(remoteUserId: 1001)
        let next = try await caller.changes.first(within: 5, "the caller's next change") { _ in true }
        #expect(next.reason == .remoteHangup)
        try await close(server, caller, a, b)
    }

    @Test func aRejectOnBBeforeAnyoneAnsweredStopsEveryDevice() async throws {
        let (server, caller, a, b) = try await ringBoth()
        try await b.api.reject(remoteUserId: 1001, reason: nil)
        try await caller.reaches(.prepared, .remoteRejected)
        try await a.reaches(.prepared, .rejectedElsewhere)
        #expect(world.engine(userId: 1002, device: 0).channel == nil)
        try await close(server, caller, a, b)
    }

    @Test func bothAcceptingAtOnceMakesOneCallWithOneWinner() async throws {
        let (server, caller, a, b) = try await ringBoth()
        async let acceptA: Void = a.api.accept(remoteUserId: 1001)
        async let acceptB: Void = b.api.accept(remoteUserId: 1001)
        _ = try await (acceptA, acceptB)
        try await caller.reaches(.connected)
        // One of them is told it lost.
        let loser = try await withTimeout(5, "a loser") {
            await withTaskGroup(of: Endpoint?.self) { group in
                for device in [a, b] {
                    group.addTask {
                        let change = try? await device.reaches(.prepared, .answeredElsewhere)
                        return change == nil ? nil : device
                    }
                }
                for await found in group where found != nil {
                    group.cancelAll()
                    return found
                }
                return nil
            }
        }
        let winner = loser?.api.deviceId == a.api.deviceId ? b : a
        #expect(loser != nil)
        #expect(winner.api.state == .connected)
        #expect(caller.api.state == .connected)
        try await close(server, caller, a, b)
    }

    @Test func theServerCopiesASendWithCopyToTheSendersOtherSessions() async throws {
        let server = try await TestServer.start()
        let a = try await server.loggedIn("1002")
        let b = try await server.loggedIn("1002")
        let peer = try await server.loggedIn("1001")
        a.send(.send(.init(id: 1, to: "1001", body: "accepted here", copy: true)))
        let copy = try await b.frame { if case .message = $0 { true } else { false } }
        #expect(
            copy
                == .message(
                    .init(from: "1002", body: "accepted here", sentAt: sentAt(copy), messageId: "m-1", to: "1001")))
        let original = try await peer.frame { if case .message = $0 { true } else { false } }
        #expect(
            original == .message(.init(from: "1002", body: "accepted here", sentAt: sentAt(copy), messageId: "m-1")))
        try await server.stop()
    }

    private func sentAt(_ frame: ServerFrame) -> Int64 {
        if case .message(let message) = frame { message.sentAt } else { 0 }
    }
}
