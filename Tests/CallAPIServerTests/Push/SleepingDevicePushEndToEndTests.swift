import CallAPI
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import CallAPITesting
import Testing

/// User 1002 is online on a tablet (CallAPI over a session that names its device) while their iPhone sleeps with its
/// VoIP push registered: a call rings the tablet over signaling and is pushed to the iPhone, over real sockets, with
/// the providers' mock. The tablet's answer withdraws the push: the woken iPhone learns why from the tombstone.
@Suite(.serialized) struct SleepingDevicePushEndToEndTests {
    let world = SimulatedRTCWorld(clock: SystemCallClock())

    /// A signaling client of 1002 on push device `device`, logged in.
    func session(on device: String, _ setup: PushEndToEndTests.Setup) async throws -> (
        SignalClient, AsyncStream<SignalClientEvent>
    ) {
        var configuration = SignalClientConfiguration(url: setup.server.url)
        configuration.deviceId = device
        let client = SignalClient(configuration: configuration, logger: quietLogger)
        let events = client.events()
        try await client.login(token: try await setup.server.token("1002"))
        return (client, events)
    }

    /// The caller and the tablet with CallAPI; the caller calls and the tablet rings.
    func ringTheTablet(_ setup: PushEndToEndTests.Setup) async throws -> (caller: CallEndpoint, tablet: CallEndpoint) {
        let (tabletSignal, _) = try await session(on: "tablet", setup)
        let tablet = try await CallEndpoint.prepared(1002, signal: tabletSignal, world: world)
        let caller = try await CallEndpoint.prepared(1001, signal: setup.caller, world: world)
        try await caller.api.call(remoteUserId: 1002, callType: .video)
        try await tablet.reaches(.calling, .remoteVideoCall)
        return (caller, tablet)
    }

    @Test func aCallToAUserOnlineOnATabletPushesTheSleepingPhoneAndTheTabletsAnswerWithdrawsIt() async throws {
        let setup = try await PushEndToEndTests.setUp()
        do {
            let (caller, tablet) = try await ringTheTablet(setup)
            let callId = caller.api.getCallId()
            let pushes = try await withTimeout(5, "the push to the iPhone") { await setup.kit.mock.waitForPushes(1) }
            #expect(pushes[0].headers["apns-push-type"] == "voip")
            #expect(pushes[0].body.contains("\"callId\":\"\(callId)\""))

            try await tablet.api.accept(remoteUserId: 1001)
            try await caller.reaches(.connected)
            let (phone, events) = try await session(on: "iphone", setup)
            let tombstone = try await PushEndToEndTests.next(events, "the tombstone") {
                if case .callWithdrawn = $0 { true } else { false }
            }
            #expect(tombstone == .callWithdrawn(callId: callId, reason: .answeredElsewhere))
            // One push for the call: CallAPI's repeats and the answer push nothing more.
            #expect(setup.kit.mock.pushes.count == 1)
            phone.logout()
            await caller.close()
            await tablet.close()
        } catch {
            Issue.record(error)
        }
        try await setup.stop()
    }

    @Test func thePhoneWokenWhileTheCallRingsGetsTheCallAndATabletsDeclineLeavesADeclinedTombstone() async throws {
        let setup = try await PushEndToEndTests.setUp()
        do {
            let (caller, tablet) = try await ringTheTablet(setup)
            let callId = caller.api.getCallId()
            _ = try await withTimeout(5, "the push to the iPhone") { await setup.kit.mock.waitForPushes(1) }
            let (phone, events) = try await session(on: "iphone", setup)
            _ = try await PushEndToEndTests.next(events, "the call on the iPhone") {
                if case .message(let from, let body, _) = $0 { from == "1001" && body.contains(callId) } else { false }
            }
            // The tablet declines: the caller hears it; a later login of the iPhone learns it was declined elsewhere.
            try await tablet.api.reject(remoteUserId: 1001, reason: nil)
            try await caller.reaches(.prepared, .remoteRejected)
            phone.logout()
            let (again, laterEvents) = try await session(on: "iphone", setup)
            let tombstone = try await PushEndToEndTests.next(laterEvents, "the tombstone") {
                if case .callWithdrawn = $0 { true } else { false }
            }
            #expect(tombstone == .callWithdrawn(callId: callId, reason: .declinedElsewhere))
            again.logout()
            await caller.close()
            await tablet.close()
        } catch {
            Issue.record(error)
        }
        try await setup.stop()
    }
}
