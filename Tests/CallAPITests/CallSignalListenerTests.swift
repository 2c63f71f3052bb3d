import CallAPITesting
import Testing

@testable import CallAPI

/// CallAPI hears the signaling channel through a listener object of its own, not through methods on the
/// endpoint that an app could call.
@Suite struct CallSignalListenerTests {
    @Test func theEndpointIsNotASignalListenerAnAppCouldFeed() {
        let api: AnyObject = CallApiImpl()
        #expect(!(api is any ISignalClientListener))
    }

    /// Deinitialize removes CallAPI's listener: a call that arrives after it is kept by the client (nobody
    /// heard it) and rings once the endpoint is initialized and prepared again.
    @Test func deinitializeStopsHearingTheChannelAndPrepareHearsItAgain() {
        let h = CallHarness()
        h.network.injectWithoutSender(text: ShortfallTests.rawCall(timestamp: h.clock.nowMillis(), callId: "a"), to: 2)
        #expect(h[2].api.state == .calling)
        h[2].api.deinitialize {}
        h.network.injectWithoutSender(text: ShortfallTests.rawCall(timestamp: h.clock.nowMillis(), callId: "b"), to: 2)
        #expect(h[2].api.state == .idle)
        h[2].api.initialize(
            config: CallConfig(
                appId: "test", userId: 2, rtcEngine: h[2].engine, signalClient: h.network.client(userId: 2),
                clock: h.clock))
        h[2].api.prepareForCall(prepareConfig: PrepareConfig(roomId: "room-2", rtcToken: "t"), completion: nil)
        #expect(h[2].api.state == .calling)
        #expect(h[2].api.getCallId() == "b")
    }

    @Test func anEndpointLetGoIsFreedWhileItsSignalClientLives() {
        let clock = ManualClock()
        let network = InMemorySignalNetwork(clock: clock)
        let client = network.client(userId: 2)
        let world = SimulatedRTCWorld(clock: clock, timing: .init())
        weak var released: CallApiImpl?
        do {
            let api = CallApiImpl()
            released = api
            api.initialize(
                config: CallConfig(
                    appId: "test", userId: 2, rtcEngine: world.engine(userId: 2), signalClient: client, clock: clock))
            api.prepareForCall(prepareConfig: PrepareConfig(roomId: "room-2", rtcToken: "t"), completion: nil)
        }
        #expect(released == nil)
        // The client is still there, and a message to it now reaches nobody and breaks nothing.
        network.injectWithoutSender(text: ShortfallTests.rawCall(timestamp: clock.nowMillis()), to: 2)
        #expect(client.userId == 2)
    }
}
