import CallAPI
import CallAPITesting
import Testing

/// Our endpoint against a client that speaks only wire format 1.0 (no acks, no keep-alives).
@Suite("Interoperating with a wire-format-1.0 peer")
struct LegacyPeerTests {
    let clock = ManualClock()
    let network: InMemorySignalNetwork
    let world: SimulatedRTCWorld
    let ours = CallApiImpl()
    let listener = RecordingCallListener()
    let legacy: LegacyCallPeer

    init() {
        network = InMemorySignalNetwork(clock: clock, latencyMillis: 20)
        world = SimulatedRTCWorld(clock: clock, timing: .init(joinLatencyMillis: 30, firstFrameLatencyMillis: 40))
        legacy = LegacyCallPeer(userId: 9, network: network, world: world)
        ours.addListener(listener: listener)
        ours.initialize(
            config: CallConfig(
                userId: 1, rtcEngine: world.engine(userId: 1), signalClient: network.client(userId: 1), clock: clock))
        ours.prepareForCall(
            prepareConfig: PrepareConfig(roomId: "room-1", callTimeoutMillisecond: 10_000), completion: nil)
    }

    private var unknownActionsSentToLegacy: [Int] {
        legacy.current.received.filter { ![0, 1, 2, 3, 4, 10].contains($0) }
    }

    @Test func weCallItAcceptsAndWeHangUp() {
        ours.call(remoteUserId: 9, completion: nil)
        clock.advance(byMillis: 600)
        #expect(legacy.current.state == .calling)
        legacy.accept()
        clock.advance(byMillis: 500)
        #expect(ours.state == .connected)
        ours.hangup(remoteUserId: 9, reason: nil, completion: nil)
        clock.advance(byMillis: 100)
        #expect(legacy.current.state == .prepared)
        #expect(listener.lastState?.reason == .localHangup)
        #expect(unknownActionsSentToLegacy.isEmpty)
    }

    @Test func itRejectsOurCall() {
        ours.call(remoteUserId: 9, completion: nil)
        clock.advance(byMillis: 100)
        legacy.reject()
        clock.advance(byMillis: 100)
        #expect(ours.state == .prepared)
        #expect(listener.lastState?.reason == .remoteRejected)
        #expect(unknownActionsSentToLegacy.isEmpty)
    }

    @Test func weCancelOurCall() {
        ours.call(remoteUserId: 9, completion: nil)
        clock.advance(byMillis: 100)
        ours.cancelCall(completion: nil)
        clock.advance(byMillis: 100)
        #expect(legacy.current.state == .prepared)
        #expect(listener.lastState?.reason == .localCancelled)
    }

    @Test func itCallsUsWeAcceptAndItHangsUp() {
        legacy.call(1)
        clock.advance(byMillis: 100)
        #expect(ours.state == .calling)
        ours.accept(remoteUserId: 9, completion: nil)
        clock.advance(byMillis: 500)
        #expect(ours.state == .connected)
        #expect(legacy.current.state == .connecting)
        legacy.hangup()
        clock.advance(byMillis: 100)
        #expect(ours.state == .prepared)
        #expect(listener.lastState?.reason == .remoteHangup)
        #expect(unknownActionsSentToLegacy.isEmpty)
    }

    @Test func itsLostHangupIsCleanedUpWhenItLeavesTheChannel() {
        legacy.call(1)
        clock.advance(byMillis: 100)
        ours.accept(remoteUserId: 9, completion: nil)
        clock.advance(byMillis: 500)
        #expect(ours.state == .connected)
        network.inject(.drop, from: 9, to: 1)
        legacy.hangup()
        clock.advance(byMillis: 1_000)
        #expect(ours.state == .connected)  // nothing arrived yet; only the RTC channel says it left
        clock.advance(byMillis: CallReliability.standard.remoteLeftGraceMillis)
        #expect(ours.state == .prepared)
        #expect(listener.lastState?.reason == .peerLost)
        #expect(world.engine(userId: 1).isReleased)
    }

    @Test func itsLostAcceptIsCleanedUpByTheRingTimer() {
        ours.call(remoteUserId: 9, completion: nil)
        clock.advance(byMillis: 100)
        network.inject(.drop, from: 9, to: 1)
        legacy.accept()
        clock.advance(byMillis: 10_000)
        #expect(ours.state == .prepared)
        #expect(listener.lastState?.reason == .callingTimeout)
        // Our timeout cancel reaches it and ends its side too.
        #expect(legacy.current.state == .prepared)
    }
}
