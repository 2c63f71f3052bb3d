import CallAPITesting
import Testing

@testable import CallAPI

/// `deinitialize` in every state: cancel / reject / hangup first, then idle(none) and event deinitialize;
/// no callback after its completion.
@Suite("deinitialize in every state")
struct DeinitializeTests {
    /// What the peer should receive first, and what it should end in.
    static func expectedEnding(_ situation: MachineDriver.Situation) -> (MessageAction, CallStateReason)? {
        switch situation {
        case .callingAsCaller: (.cancelCall, .remoteCancelled)
        case .callingAsCallee: (.reject, .remoteRejected)
        case .connecting, .connected: (.hangup, .remoteHangup)
        default: nil
        }
    }

    @Test(
        "deinitialize ends the call first, then reports idle(none) and the deinitialize event",
        arguments: MachineDriver.Situation.allCases)
    func deinitializeInEveryState(situation: MachineDriver.Situation) throws {
        let h = CallHarness.situations()
        let (actor, peer) = h.reach(situation)
        let sentBefore = h.messages(from: actor, to: peer).count
        let done = CompletionProbe()
        let recordsAtCompletion = Locked<Int?>(nil)
        let listener = h[actor].listener
        h[actor].api.deinitialize {
            recordsAtCompletion.withLock { $0 = listener.records.count }
            done.handler(nil)
        }
        #expect(done.succeeded, "the completion ran once")
        #expect(h[actor].api.state == .idle)
        #expect(h[actor].api.getCallId() == "")
        #expect(h[actor].engine.isReleased)

        if situation == .idleUninitialized {
            #expect(listener.stateRecords.isEmpty, "nothing to report: it was not initialized")
        } else {
            let last = try #require(listener.lastState)
            #expect(StateReason(last.state, last.reason) == .init(.idle, .none))
            #expect(listener.events.last == .deinitialize)
        }
        if let (action, peerReason) = Self.expectedEnding(situation) {
            let sent = h.messages(from: actor, to: peer).dropFirst(sentBefore)
            #expect(sent.map(\.action) == [action], "the call is ended on the wire first")
            #expect(h[peer].listener.lastState?.reason == peerReason)
            #expect(h[peer].api.state == .prepared)
            #expect(h[peer].engine.isReleased)
            // The local end is reported before idle.
            let states = listener.stateReasons.map(\.state)
            #expect(states == [.prepared, .idle])
        } else {
            #expect(h.messages(from: actor, to: peer).count == sentBefore, "nothing to end")
        }
        if situation == .connected {
            #expect(
                listener.records.contains(
                    .disconnected(roomId: "room-1", hangupUserId: 1, currentUserId: 1, duration: 0)))
            #expect(h[peer].listener.disconnectCount == 1)
        }

        // No callback after the completion: not at once, not for messages, RTC events or timers later.
        #expect(recordsAtCompletion.withLock { $0 } == listener.records.count, "callbacks came after the completion")
        let after = listener.records.count
        let logsAfter = listener.logs.count
        _ = h[peer].api.probe { $0.call(remoteUserId: actor, completion: $1) }
        h[actor].engine.emit(.error(code: 1, message: "late"))
        h[actor].engine.emit(.tokenWillExpire(channel: "room-1"))
        h.clock.advance(byMillis: 60_000)
        #expect(listener.records.count == after)
        #expect(listener.logs.count == logsAfter)
    }

    @Test(
        "The machine: deinitialize mid-call ends it, then idle(none), event deinitialize, and forgets user and config")
    func machineDeinitialize() {
        var driver = MachineDriver(.connected)
        let actions = driver.handle(.deinitialize)
        #expect(actions.sent.map(\.message.action) == [.hangup])
        #expect(actions.states == [.prepared, .idle])
        #expect(actions.stateChanges.last?.reason == CallStateReason.none)
        #expect(actions.events.suffix(1) == [.deinitialize])
        #expect(driver.machine.state == .idle)
        #expect(driver.machine.userId == nil)
        #expect(driver.machine.prepareConfig == nil)
        #expect(actions.completion != nil, "the request completes")
        #expect(driver.handle(.prepare(MachineDriver.prepareConfig())).error?.code == .notInitialized)
    }

    @Test("After deinitialize the endpoint can be initialized and used again")
    func reinitialize() {
        let h = CallHarness()
        h.reach(.connected)
        h[1].api.deinitialize {}
        h[1].api.initialize(
            config: CallConfig(
                appId: "test", userId: 1, rtcEngine: h[1].engine, signalClient: h.network.client(userId: 1),
                clock: h.clock))
        let prepare = h[1].api.probe {
            $0.prepareForCall(
                prepareConfig: PrepareConfig(
                    roomId: "room-1", localView: h[1].localView, remoteView: h[1].remoteView), completion: $1)
        }
        #expect(prepare.succeeded)
        _ = h[1].api.probe { $0.call(remoteUserId: 2, completion: $1) }
        _ = h[2].api.probe { $0.accept(remoteUserId: 1, completion: $1) }
        #expect(h[1].api.state == .connected && h[2].api.state == .connected)
    }
}
