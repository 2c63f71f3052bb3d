import CallAPIPushMock
import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import Foundation
import Testing

/// Push over real sockets: a real server whose providers point at the HTTP/2 TLS mock, and real signal clients.
@Suite(.serialized) struct PushEndToEndTests {
    /// A running server and mock, with the callee's device registered and the callee logged out.
    struct Setup {
        let kit: PushTestKit
        let server: TestServer
        let caller: SignalClient

        func stop() async throws {
            caller.logout()
            try await server.stop()
            await kit.stop()
        }

        /// Sends a CallAPI message (wire format 1.0) from 1001 to 1002 through CallAPI's signaling seam.
        func sendCallAPI(action: Int, callId: String, extra: String = "") async throws {
            let body =
                "{\"message_action\":\(action),\"message_version\":\"1.0\",\"message_timestamp\":1,\"fromUserId\":1001,"
                + "\"callId\":\"\(callId)\",\"remoteUserId\":1002,\"fromRoomId\":\"room\","
                + "\"fromUserExtension\":{\"displayName\":\"Ada\"}\(extra)}"
            let caller = caller
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                caller.sendMessage(userId: "1002", message: body) { error in
                    if let error { done.resume(throwing: error) } else { done.resume() }
                }
            }
        }

        /// The callee's app, woken: connects, logs in, and returns its events.
        func wake() async throws -> (SignalClient, AsyncStream<SignalClientEvent>) {
            let client = SignalClient(configuration: .init(url: server.url))
            let events = client.events()
            try await client.login(token: try await server.token("1002"))
            return (client, events)
        }

        /// Waits until the server has no session of `user`.
        func waitOffline(_ user: String) async throws {
            try await withTimeout(5, "\(user) to be offline") { [server] in
                while await server.server.onlineUsers.contains(user) { try await Task.sleep(for: .milliseconds(5)) }
            }
        }

        func devices(of user: String) async throws -> String {
            try await server.admin("GET", "/v1/users/\(user)/devices").1
        }
    }

    /// With a `clock`, the server and the mock read it (it must be near real time: clients check token times).
    static func setUp(
        device: PushDevice = PushTestKit.apnsDevice(), devicesFile: String? = nil, clock: TestClock? = nil,
        script: [MockAnswer] = []
    ) async throws -> Setup {
        let kit = try await PushTestKit.start(clock: clock ?? TestClock(SystemServerClock().nowMillis()))
        kit.mock.script(device.token, script)
        let server = try await TestServer.start(
            clock: clock ?? SystemServerClock(), tickIntervalMillis: clock == nil ? 100 : nil
        ) {
            $0.push = kit.pushConfiguration(devicesFile: devicesFile)
        }
        let callee = SignalClient(configuration: .init(url: server.url))
        try await callee.login(token: try await server.token("1002"))
        try await callee.registerDevice(device)
        callee.logout()
        let caller = SignalClient(configuration: .init(url: server.url))
        try await caller.login(token: try await server.token("1001"))
        let setup = Setup(kit: kit, server: server, caller: caller)
        try await setup.waitOffline("1002")
        return setup
    }

    static func next(
        _ events: AsyncStream<SignalClientEvent>, _ what: String, within seconds: Double = 5,
        where match: @escaping @Sendable (SignalClientEvent) -> Bool
    ) async throws -> SignalClientEvent {
        try await withTimeout(seconds, what) {
            for await event in events where match(event) { return event }
            throw TimedOut(what: what)
        }
    }

    @Test func anOfflineCalleeGetsExactlyOnePushAndRingsWithTheSameCallIdOnLogin() async throws {
        let setup = try await Self.setUp()
        try await setup.sendCallAPI(action: 0, callId: "call-e2e-1")
        let pushes = try await withTimeout(5, "the push") { await setup.kit.mock.waitForPushes(1) }
        #expect(pushes[0].status == 200)
        #expect(pushes[0].headers["apns-push-type"] == "voip")
        #expect(pushes[0].body.contains("\"callId\":\"call-e2e-1\""))
        #expect(pushes[0].body.contains("\"callerName\":\"Ada\""))

        let (woken, events) = try await setup.wake()
        let ring = try await Self.next(events, "the call") {
            if case .message = $0 { true } else { false }
        }
        guard case .message(let from, let body, _) = ring else { return }
        #expect(from == "1001")
        #expect(body.contains("\"callId\":\"call-e2e-1\""))
        #expect(setup.kit.mock.pushes.count == 1)
        woken.logout()
        try await setup.stop()
    }

    @Test func aCancelBeforeLoginSendsNoPushAndTheWokenClientGetsTheTombstone() async throws {
        let setup = try await Self.setUp()
        try await setup.sendCallAPI(action: 10, callId: "call-e2e-2")
        _ = try await withTimeout(5, "the push") { await setup.kit.mock.waitForPushes(1) }
        try await setup.sendCallAPI(action: 1, callId: "call-e2e-2", extra: ",\"cancelCallByInternal\":0")

        let (woken, events) = try await setup.wake()
        let tombstone = try await Self.next(events, "the tombstone") {
            if case .callWithdrawn = $0 { true } else { false }
        }
        #expect(tombstone == .callWithdrawn(callId: "call-e2e-2", reason: .cancelled))
        // The cancel itself never travels as a push, and the withdrawn call is not delivered.
        #expect(setup.kit.mock.pushes.count == 1)
        let users = try await woken.onlineUsers()
        #expect(users.contains("1002"))
        woken.logout()
        try await setup.stop()
    }

    @Test func aDeviceTheProviderRejectsAsUnregisteredIsRemoved() async throws {
        let setup = try await Self.setUp(device: PushTestKit.fcmDevice(token: "fcm-gone"))
        setup.kit.mock.unregister("fcm-gone")
        #expect(try await setup.devices(of: "1002").contains("\"deviceId\":\"pixel\""))
        try await setup.sendCallAPI(action: 0, callId: "call-e2e-3")
        let pushes = try await withTimeout(5, "the push") { await setup.kit.mock.waitForPushes(1) }
        #expect(pushes[0].status == 404)
        try await withTimeout(5, "the device's removal") {
            while try await setup.devices(of: "1002").contains("pixel") { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(setup.server.server.metricsText().contains("outcome=\"unregistered\""))
        try await setup.stop()
    }

    /// Retries wait on the server's clock, not the real one: three 503s are retried after 250, 500 and 1000 ms of
    /// server time (the clock only moves when the test moves it), and the fourth failure is the last attempt.
    @Test func retriesFollowTheBackoffScheduleOnTheServersClock() async throws {
        let clock = TestClock(SystemServerClock().nowMillis())
        let setup = try await Self.setUp(clock: clock, script: Array(repeating: .unavailable, count: 4))
        try await setup.sendCallAPI(action: 0, callId: "call-retry")
        for (attempt, delay) in [(1, Int64(250)), (2, 500), (3, 1000)] {
            let pushes = try await withTimeout(5, "attempt \(attempt)") { await setup.kit.mock.waitForPushes(attempt) }
            #expect(pushes.map(\.status) == Array(repeating: 503, count: attempt))
            try await withTimeout(5, "retry \(attempt) to be scheduled") { await clock.waitForSleeper() }
            #expect(clock.sleeperDeadlines == [clock.nowMillis() + delay])
            // One millisecond short of the deadline, nothing is sent.
            clock.advance(millis: delay - 1)
            #expect(clock.sleeperDeadlines == [clock.nowMillis() + 1])
            clock.advance(millis: 1)
        }
        let pushes = try await withTimeout(5, "attempt 4") { await setup.kit.mock.waitForPushes(4) }
        #expect(pushes.count == 4)
        try await withTimeout(5, "the push to be counted as failed") {
            while !setup.server.server.metricsText().contains(
                "callapi_pushes_total{provider=\"apns\",outcome=\"failed\"} 1")
            {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        #expect(
            setup.server.server.metricsText().contains("callapi_pushes_total{provider=\"apns\",outcome=\"retried\"} 3"))
        #expect(clock.sleeperDeadlines.isEmpty)
        #expect(setup.kit.mock.pushes.count == 4)
        try await setup.stop()
    }

    @Test func registrationsSurviveAServerRestart() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("callapi-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let setup = try await Self.setUp(devicesFile: file.path)
        try await setup.stop()
        let kit = try await PushTestKit.start()
        let again = try await TestServer.start { $0.push = kit.pushConfiguration(devicesFile: file.path) }
        let (status, body) = try await again.admin("GET", "/v1/users/1002/devices")
        #expect(status == 200)
        #expect(body.contains("\"deviceId\":\"iphone\""))
        #expect(!body.contains(PushTestKit.apnsDevice().token))
        #expect(try await again.admin("DELETE", "/v1/users/1002/devices/iphone").1 == "{\"removed\":true}")
        #expect(try await again.admin("GET", "/v1/users/1002/devices").1.contains("\"devices\":[]"))
        try await again.stop()
        await kit.stop()
    }

    /// Push → ringing: from the mock receiving the push to the woken client holding the call (connect, login,
    /// held delivery), over loopback.
    @Test func pushToRingingTimeWithTheMock() async throws {
        let setup = try await Self.setUp()
        var samples: [Double] = []
        for round in 1...15 {
            let callId = "call-p50-\(round)"
            try await setup.sendCallAPI(action: 0, callId: callId)
            _ = try await withTimeout(5, "push \(round)") { await setup.kit.mock.waitForPushes(round) }
            let pushed = ContinuousClock.now
            let (woken, events) = try await setup.wake()
            _ = try await Self.next(events, "ring \(round)") {
                if case .message(_, let body, _) = $0 { body.contains(callId) } else { false }
            }
            let elapsed = ContinuousClock.now - pushed
            samples.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
            woken.logout()
            try await setup.waitOffline("1002")
        }
        let sorted = samples.sorted()
        let p50 = sorted[sorted.count / 2]
        print(
            "push → ringing over loopback with the mock: p50 \(String(format: "%.1f", p50)) ms, max \(String(format: "%.1f", sorted.last ?? 0)) ms (n=\(sorted.count))"
        )
        #expect(setup.kit.mock.pushes.count == 15)
        #expect(p50 < 2_000)
        try await setup.stop()
    }
}
