// The README's "test your own call screen" snippet, compiled and run here. ReadmeGuideTests checks that
// README.md shows exactly the code between the markers.
import CallAPI
import CallAPITesting
import Testing

@Suite("README testing guide")
struct TestingGuide {
    // README-TESTING-BEGIN
    @Test func callScreenConnectsAndTimesOutOnAManualClock() async throws {
        let clock = ManualClock()
        let network = InMemorySignalNetwork(clock: clock, latencyMillis: 30)  // network.inject(.drop, to: 2) ...
        let world = SimulatedRTCWorld(clock: clock, timing: .init(joinLatencyMillis: 50, firstFrameLatencyMillis: 80))
        func screen(_ user: UInt) -> CallScreen {
            CallScreen(
                userId: user, rtcEngine: world.engine(userId: user), signalClient: network.client(userId: user),
                clock: clock)
        }
        let alice = screen(1)
        let bob = screen(2)  // accepts every call at once
        try await alice.prepare(localView: TestCanvas(), remoteView: TestCanvas())
        try await bob.prepare(localView: TestCanvas(), remoteView: TestCanvas())

        alice.call(2)
        #expect(alice.api.state == .calling)
        clock.advance(byMillis: 500)  // messages, joins and first frames arrive: no waiting
        #expect(alice.api.state == .connected && bob.api.state == .connected)
        alice.hangup(2)
        clock.advance(byMillis: 100)
        #expect(bob.api.state == .prepared)

        _ = network.client(userId: 3)  // user 3 is signed in but has no call screen: nobody answers
        alice.call(3)
        clock.advance(byMillis: 15_000)  // the ring timer fires
        #expect(alice.api.state == .prepared)
    }
    // README-TESTING-END
}
