import CallAPI
import CallAPIServer
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import CallAPITesting
import Testing

/// A user online on a tablet while their iPhone sleeps, on a cluster of three nodes over the real PostgreSQL
/// (docs/push.md, "A user online on another device"): the caller is on node a, the tablet on node b. The call rings
/// the tablet and is pushed to the iPhone by a, which knows the tablet's device from b's presence rows; the woken
/// iPhone logs in to node c and gets the call there; the tablet's answer, relayed by b, withdraws the push, and the
/// iPhone's next login hears why.
@Suite(.serialized, .enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct ClusterSleepingDevicePushTests {
    let world = SimulatedRTCWorld(clock: SystemCallClock())

    /// A signaling client of 1002 on push device `device`, logged in to `node`.
    func session(of node: TestServer, on device: String) async throws -> (SignalClient, AsyncStream<SignalClientEvent>)
    {
        var configuration = SignalClientConfiguration(url: node.url)
        configuration.deviceId = device
        let client = SignalClient(configuration: configuration, logger: quietLogger)
        let events = client.events()
        try await client.login(token: try await node.token("1002"))
        return (client, events)
    }

    @Test func theTabletsNodeIsNotTheCallersButTheSleepingPhoneIsPushedGetsTheCallAndHearsItWasAnswered()
        async throws
    {
        let kit = try await PushTestKit.start(clock: TestClock(SystemServerClock().nowMillis()))
        let (_, nodes) = try await ClusterEndToEndTests.nodes(["a", "b", "c"]) { _, configuration in
            configuration.push = kit.pushConfiguration()
        }
        do {
            // The iPhone registered its VoIP push through node c, then slept.
            let (registering, _) = try await session(of: nodes[2], on: "iphone")
            try await registering.registerDevice(PushTestKit.apnsDevice())
            registering.logout()
            try await withTimeout(10, "node a to know the iPhone") {
                while try await !nodes[0].admin("GET", "/v1/users/1002/devices").1.contains("\"iphone\"") {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            let (tabletSignal, _) = try await session(of: nodes[1], on: "tablet")
            let tablet = try await CallEndpoint.prepared(1002, signal: tabletSignal, world: world)
            let callerSignal = SignalClient(configuration: .init(url: nodes[0].url), logger: quietLogger)
            try await callerSignal.login(token: try await nodes[0].token("1001"))
            let caller = try await CallEndpoint.prepared(1001, signal: callerSignal, world: world)
            try await withTimeout(10, "node a to see the tablet online") {
                while await !nodes[0].server.onlineUsers.contains("1002") {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }

            try await caller.api.call(remoteUserId: 1002, callType: .video)
            try await tablet.reaches(.calling, .remoteVideoCall)
            let callId = caller.api.getCallId()
            let pushes = try await withTimeout(5, "the push to the iPhone") { await kit.mock.waitForPushes(1) }
            #expect(pushes[0].headers["apns-push-type"] == "voip")
            #expect(pushes[0].body.contains("\"callId\":\"\(callId)\""))

            // Woken, the iPhone logs in to node c: node a hands it the call it keeps (held, as the tablet got it).
            let phone = RawSocket(url: nodes[2].url)
            _ = try await phone.login(try await nodes[2].token("1002"), deviceId: "iphone")
            let call = try await ClusterEndToEndTests.frame(on: phone, within: 10, "the call on the iPhone") {
                if case .message(let message) = $0 { message.body.contains(callId) } else { false }
            }
            guard case .message(let message) = call else { throw UnexpectedFrame(frame: call) }
            #expect(message.held == true && message.from == "1001" && message.messageId.hasPrefix("m-a-"))

            // The tablet answers; b relays it to the caller on a, which settles the iPhone's push.
            try await tablet.api.accept(remoteUserId: 1001)
            try await caller.reaches(.connected)
            phone.close()
            try await withTimeout(10, "the withdrawal's tombstone") {
                while true {
                    let (again, laterEvents) = try await session(of: nodes[2], on: "iphone")
                    let withdrawn = try? await PushEndToEndTests.next(laterEvents, "the tombstone", within: 1) {
                        if case .callWithdrawn = $0 { true } else { false }
                    }
                    again.logout()
                    if let withdrawn {
                        #expect(withdrawn == .callWithdrawn(callId: callId, reason: .answeredElsewhere))
                        return
                    }
                }
            }
            // One push for the call, from one node.
            #expect(kit.mock.pushes.count == 1)
            await caller.close()
            await tablet.close()
        } catch {
            Issue.record(error)
        }
        for node in nodes { try await node.stop() }
        await kit.stop()
    }
}
