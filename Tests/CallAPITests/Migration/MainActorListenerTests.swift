import CallAPI
import CallAPITesting
import Testing

/// Main-actor delivery: a listener that is a `@MainActor` view controller, as in the seeds' apps, under Swift 6.
@Suite("Main-actor listeners")
@MainActor
struct MainActorListenerTests {
    let clock = ManualClock()
    let network: InMemorySignalNetwork
    let world: SimulatedRTCWorld

    init() {
        network = InMemorySignalNetwork(clock: clock, latencyMillis: 20)
        world = SimulatedRTCWorld(clock: clock, timing: .init(joinLatencyMillis: 30, firstFrameLatencyMillis: 40))
    }

    func screen(_ user: UInt) -> SeedCallViewController {
        SeedCallViewController(
            currentUid: user, rtcEngine: world.engine(userId: user), signalClient: network.client(userId: user),
            clock: clock)
    }

    /// Lets the main actor run the callbacks queued so far (no time passes: the clock is manual).
    func drainMainActor(until done: () -> Bool) async {
        for _ in 0..<10_000 where !done() { await Task.yield() }
    }

    /// Advances the manual clock in 10 ms steps, letting the main actor handle what each step reported (a view
    /// controller answers a ringing call from its callback, as the seeds' apps do).
    func advance(byMillis millis: Int64) async {
        for _ in 0..<(millis / 10) {
            clock.advance(byMillis: 10)
            for _ in 0..<20 { await Task.yield() }
        }
    }

    @Test func seedsIntegrationCodeMovedOverPlacesAcceptsAndEndsACall() async {
        let caller = screen(1001)
        let callee = screen(1002)
        caller.prepare(rtcToken: "<wildcard token>")
        callee.prepare(rtcToken: "<wildcard token>")
        caller.call(remoteUserId: 1002)
        await advance(byMillis: 500)
        #expect(caller.api.state == .connected && callee.api.state == .connected)
        caller.hangup(showUserId: 1002)
        await advance(byMillis: 100)
        await drainMainActor { callee.seen.last?.1 == .remoteHangup && caller.seen.last?.1 == .localHangup }

        #expect(caller.seen.map(\.0) == [.prepared, .calling, .connecting, .connected, .prepared])
        #expect(callee.seen.map(\.0) == [.prepared, .calling, .connecting, .connected, .prepared])
        #expect(callee.seen.last?.1 == .remoteHangup)
        #expect(caller.events.contains(.remoteAccepted))
        caller.close()
        callee.close()
    }

    @Test func callbacksArriveOnTheMainActorInTheOrderTheAPIReportedThem() async {
        final class Recorder: CallApiMainActorListener {
            var states: [CallStateType] = []
            func onCallStateChanged(
                with state: CallStateType, stateReason: CallStateReason, eventReason: String,
                eventInfo: [String: Any]
            ) {
                states.append(state)
            }
        }
        let caller = screen(1)
        let callee = screen(2)
        caller.prepare(rtcToken: "<wildcard token>")
        callee.prepare(rtcToken: "<wildcard token>")
        let recorder = Recorder()
        caller.api.addListener(listener: recorder)
        // Reported from another thread; the recorder's methods are main-actor isolated, and the bridge runs them there.
        let api = caller.api
        await Task.detached { api.call(remoteUserId: 2, completion: nil) }.value
        await advance(byMillis: 500)
        await drainMainActor { recorder.states.count >= 3 }
        #expect(recorder.states == [.calling, .connecting, .connected])
        caller.api.removeListener(listener: recorder)
        caller.hangup(showUserId: 2)
        await advance(byMillis: 100)
        await drainMainActor { caller.seen.last?.0 == .prepared }
        #expect(recorder.states.count == 3, "a removed listener hears nothing more")
        #expect(callee.seen.last?.1 == .remoteHangup)
    }
}
