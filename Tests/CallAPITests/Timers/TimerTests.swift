import CallAPITesting
import Testing

@testable import CallAPI

/// call-behaviour.md, "Timer": the ring timer runs on both sides and bounds calling and connecting.
@Suite("Ring timer")
struct TimerTests {
    @Test(
        "Caller's timer: prepared(callingTimeout) locally, a cancel with cancelCallByInternal 1 makes the callee prepared(remoteCallingTimeout)"
    )
    func callerTimesOut() throws {
        let h = CallHarness(prepare: PrepareConfig(callTimeoutMillisecond: 3_000))
        h.reprepare(2) { $0.callTimeoutMillisecond = 0 }
        h.reach(.callingAsCaller)
        h.clock.advance(byMillis: 2_999)
        #expect(h[1].api.state == .calling)
        #expect(h[2].api.state == .calling)
        h.clock.advance(byMillis: 1)
        #expect(h[1].listener.stateReasons == [.init(.prepared, .callingTimeout)])
        #expect(h[1].listener.events.contains(.callingTimeout))
        #expect(h[2].listener.stateReasons == [.init(.prepared, .remoteCallingTimeout)])
        #expect(h[2].listener.events.contains(.remoteCallingTimeout))
        let cancel = try #require(h.messages(from: 1, to: 2).last)
        #expect(cancel.action == .cancelCall)
        #expect(cancel.cancelCallByInternal)
        #expect(h.messages(from: 1, to: 2).last?.action == .cancelCall)
        #expect(h.messages(from: 1, to: 2).last?.cancelCallByInternal == true)
        #expect(h[1].engine.isReleased && h[2].engine.isReleased)
        #expect(h[1].api.getCallId() == "" && h[2].api.getCallId() == "")
    }

    @Test("Callee's timer: prepared(callingTimeout) on the callee, the caller sees remoteCallingTimeout")
    func calleeTimesOut() throws {
        let h = CallHarness(prepare: PrepareConfig(callTimeoutMillisecond: 2_000))
        h.reprepare(1) { $0.callTimeoutMillisecond = 0 }
        h.reach(.callingAsCaller)
        h.clock.advance(byMillis: 1_999)
        #expect(h[2].api.state == .calling)
        h.clock.advance(byMillis: 1)
        #expect(h[2].listener.stateReasons == [.init(.prepared, .callingTimeout)])
        #expect(h[2].listener.events.contains(.callingTimeout))
        #expect(h[1].listener.stateReasons == [.init(.prepared, .remoteCallingTimeout)])
        let cancel = try #require(h.messages(from: 2, to: 1).last)
        #expect(cancel.action == .cancelCall && cancel.cancelCallByInternal)
        #expect(h[1].engine.isReleased && h[2].engine.isReleased)
    }

    @Test("Both timers running: each side ends the call once, in prepared")
    func bothTimersRun() {
        let h = CallHarness(prepare: PrepareConfig(callTimeoutMillisecond: 1_000))
        h.reach(.callingAsCaller)
        h.clock.advance(byMillis: 1_000)
        #expect(h[1].api.state == .prepared)
        #expect(h[2].api.state == .prepared)
        #expect(h[1].listener.stateRecords.count == 1)
        #expect(h[2].listener.stateRecords.count == 1)
        let reasons = [h[1].listener.lastState?.reason, h[2].listener.lastState?.reason]
        #expect(reasons.allSatisfy { $0 == .callingTimeout || $0 == .remoteCallingTimeout })
        #expect(h.clock.pendingTimers == 0)
    }

    @Test("The timer also bounds connecting: a call stuck waiting for the first frame times out")
    func timerBoundsConnecting() {
        let h = CallHarness(
            timing: .init(firstFrameLatencyMillis: 60_000), prepare: PrepareConfig(callTimeoutMillisecond: 5_000))
        h.reprepare(2) { $0.callTimeoutMillisecond = 0 }
        h.reach(.callingAsCaller)
        h.clock.advance(byMillis: 1_000)
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(h[1].api.state == .connecting)
        h.clock.advance(byMillis: 3_999)
        #expect(h[1].api.state == .connecting)
        h.clock.advance(byMillis: 1)
        #expect(h[1].listener.lastState?.reason == .callingTimeout)
        #expect(
            h[2].listener.lastState.map { StateReason($0.state, $0.reason) } == .init(.prepared, .remoteCallingTimeout))
    }

    @Test("Connected stops the timer: the call outlives the timeout")
    func connectedStopsTheTimer() {
        // Without the reliability layer's keep-alive timers, the ring timer is the only one there could be.
        let h = CallHarness(prepare: PrepareConfig(callTimeoutMillisecond: 1_000), reliability: .off)
        h.reach(.connected)
        #expect(h.clock.pendingTimers == 0)
        h.clock.advance(byMillis: 60_000)
        #expect(h[1].api.state == .connected)
        #expect(h[2].api.state == .connected)
        #expect(h[1].listener.stateRecords.isEmpty && h[2].listener.stateRecords.isEmpty)
    }

    @Test("callTimeoutMillisecond = 0 means no timer")
    func zeroMeansNoTimer() {
        var driver = MachineDriver(.prepared, config: MachineDriver.prepareConfig(timeout: 0))
        #expect(!driver.handle(.call(remoteUserId: 2, type: .video, extension: nil, callId: "c")).hasStartTimer)
        var callee = MachineDriver(.prepared, config: MachineDriver.prepareConfig(timeout: 0))
        #expect(!callee.ringFromPeer().hasStartTimer)

        let h = CallHarness(prepare: PrepareConfig(callTimeoutMillisecond: 0), reliability: .off)
        h.reach(.callingAsCaller)
        #expect(h.clock.pendingTimers == 0)
        h.clock.advance(byMillis: 24 * 3_600_000)
        #expect(h[1].api.state == .calling)
        #expect(h[2].api.state == .calling)
    }

    @Test("The machine starts the timer with the configured length on both sides and stops it when the call ends")
    func machineStartsAndStops() {
        var caller = MachineDriver(.prepared, config: MachineDriver.prepareConfig(timeout: 7_000))
        let placed = caller.handle(.call(remoteUserId: 2, type: .video, extension: nil, callId: "c"))
        #expect(placed.contains(.startTimer(.ring(callId: "c"), millis: 7_000)))
        #expect(caller.handle(.cancel).hasStopTimer)

        var callee = MachineDriver(.prepared, config: MachineDriver.prepareConfig(timeout: 7_000))
        #expect(callee.ringFromPeer(callId: "r").contains(.startTimer(.ring(callId: "r"), millis: 7_000)))
    }

    @Test("A fire of the machine's timer for another call, or after the call ended, does nothing")
    func staleFireIsIgnored() {
        var driver = MachineDriver(.callingAsCaller)
        #expect(driver.handle(.timerFired(.ring(callId: "old-call"))).isEmpty)
        #expect(driver.machine.state == .calling)
        var connected = MachineDriver(.connected)
        #expect(connected.handle(.timerFired(.ring(callId: MachineDriver.ownCallId))).isEmpty)
        #expect(connected.machine.state == .connected)
        var prepared = MachineDriver(.prepared)
        #expect(prepared.handle(.timerFired(.ring(callId: MachineDriver.ownCallId))).isEmpty)
    }

    @Test(
        "The machine's fire: cancel with cancelCallByInternal 1 to the peer, leave, prepared(callingTimeout)",
        arguments: [MachineDriver.Situation.callingAsCaller, .callingAsCallee, .connecting, .connectingAsCallee])
    func machineFire(situation: MachineDriver.Situation) throws {
        var driver = MachineDriver(situation)
        let callId = driver.machine.callId
        let actions = driver.handle(.timerFired(.ring(callId: callId)))
        let sent = try #require(actions.sent.first)
        #expect(sent.to == MachineDriver.peerId)
        #expect(sent.message.action == .cancelCall)
        #expect(sent.message.cancelCallByInternal)
        #expect(sent.message.callId == callId)
        #expect(actions.reasons == [.callingTimeout])
        #expect(actions.events.contains(.callingTimeout))
        #expect(actions.hasLeave)
        #expect(driver.machine.state == .prepared)
    }

    @Test("A timer of an ended call does not touch the next call")
    func oldTimerDoesNotTouchNextCall() {
        let h = CallHarness(prepare: PrepareConfig(callTimeoutMillisecond: 5_000))
        h.reach(.callingAsCaller)
        h.clock.advance(byMillis: 4_000)
        _ = h[1].api.probe { $0.cancelCall(completion: $1) }
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        h.clock.advance(byMillis: 4_000)
        #expect(h[1].api.state == .calling, "the first call's timer would have fired at 5 s")
        #expect(h[2].api.state == .calling)
        h.clock.advance(byMillis: 1_000)
        #expect(h[1].api.state == .prepared, "the second call's timer fires at 4 + 5 s")
    }
}
