import CallAPI
import CallAPISystemCall
import CallAPISystemCallTesting
import Testing

@Suite("System call bridge: outgoing calls and mute")
struct OutgoingCallBridgeTests {
    @Test func anOutgoingCallIsReportedStartedConnectingAndConnected() throws {
        let h = BridgeHarness()
        h.caller.api.call(remoteUserId: 2, callType: .video, callExtension: [:], completion: nil)
        let shown = try #require(h.caller.screen.calls.first)
        let uuid = shown.report.uuid
        #expect(shown.isOutgoing)
        #expect(shown.status == .dialing)
        #expect(shown.report.remoteUserId == 2)
        #expect(uuid == CallUUID.of(callId: h.caller.api.getCallId()))

        h.callee.api.accept(remoteUserId: 1, completion: nil)
        #expect(h.caller.api.state == .connected)
        #expect(
            h.caller.screen.events == [.reportedOutgoing(uuid), .outgoingConnecting(uuid), .outgoingConnected(uuid)])
        #expect(h.caller.screen.call(uuid)?.status == .active)
    }

    @Test func endingAnOutgoingCallOnTheSystemScreenCancelsItWhileItRingsAndHangsUpOnceConnected() throws {
        let h = BridgeHarness()
        h.caller.api.call(remoteUserId: 2, completion: nil)
        let first = try #require(h.caller.screen.calls.first).report.uuid
        h.caller.screen.end(first)
        #expect(h.caller.api.state == .prepared)
        #expect(h.callee.api.state == .prepared)
        #expect(h.callee.screen.calls.first?.status == .ended(.remoteEnded))

        h.caller.api.call(remoteUserId: 2, completion: nil)
        let second = try #require(h.caller.screen.calls.last).report.uuid
        #expect(second != first)
        h.callee.api.accept(remoteUserId: 1, completion: nil)
        h.caller.screen.end(second)
        #expect(h.caller.api.state == .prepared)
        #expect(h.callee.api.state == .prepared)
        #expect(h.callee.screen.calls.last?.status == .ended(.remoteEnded))
        #expect(h.caller.screen.call(second)?.status == .ended(nil))
        #expect(h.caller.screen.violations.isEmpty)
        #expect(h.callee.screen.violations.isEmpty)
    }

    @Test func aCallDeclinedByTheCalleeEndsAsRemoteEnded() throws {
        let h = BridgeHarness()
        h.caller.api.call(remoteUserId: 2, completion: nil)
        h.callee.api.reject(remoteUserId: 1, reason: "busy", completion: nil)
        #expect(h.caller.screen.calls.first?.status == .ended(.remoteEnded))
        // The callee declined in its app: its system screen is asked to end the call, and it is fulfilled.
        let calleeCall = try #require(h.callee.screen.calls.first)
        #expect(calleeCall.status == .ended(nil))
        #expect(h.callee.screen.events.contains(.endRequested(calleeCall.report.uuid)))
        #expect(h.callee.screen.pendingActionCount == 0)
        #expect(h.callee.screen.violations.isEmpty)
    }

    @Test func aCallAcceptedInTheAppIsMarkedAnsweredOnTheSystemScreen() throws {
        let h = BridgeHarness()
        h.caller.api.call(remoteUserId: 2, completion: nil)
        let uuid = try #require(h.callee.screen.calls.first).report.uuid
        h.callee.api.accept(remoteUserId: 1, completion: nil)
        #expect(h.callee.screen.events.contains(.answerRequested(uuid)))
        #expect(h.callee.screen.call(uuid)?.status == .active)
        #expect(h.callee.screen.pendingActionCount == 0)
        #expect(h.callee.screen.violations.isEmpty)
    }

    @Test func muteOnTheSystemScreenStopsPublishingTheMicrophoneAndUnmuteRestoresIt() throws {
        let h = BridgeHarness()
        h.caller.api.call(remoteUserId: 2, callType: .video, callExtension: [:], completion: nil)
        h.callee.api.accept(remoteUserId: 1, completion: nil)
        let uuid = try #require(h.caller.screen.calls.first).report.uuid

        h.caller.screen.setMuted(uuid, true)
        #expect(h.caller.engine.media?.publishMicrophone == false)
        #expect(h.caller.engine.media?.publishCamera == true)
        #expect(h.caller.screen.call(uuid)?.muted == true)
        #expect(h.caller.screen.events.last == .completed(.mute, uuid, fulfilled: true))

        h.caller.screen.setMuted(uuid, false)
        #expect(h.caller.engine.media?.publishMicrophone == true)
        #expect(h.caller.screen.call(uuid)?.muted == false)
        #expect(h.caller.api.state == .connected)
    }

    @Test func aMuteSetWhileRingingHoldsOnceTheAnsweredCallJoins() throws {
        let h = BridgeHarness()
        h.caller.api.call(remoteUserId: 2, callType: .audio, callExtension: [:], completion: nil)
        let uuid = try #require(h.callee.screen.calls.first).report.uuid
        h.callee.screen.setMuted(uuid, true)
        h.callee.screen.answer(uuid)
        #expect(h.callee.api.state == .connected)
        #expect(h.callee.engine.media?.publishMicrophone == false)
        #expect(h.callee.screen.call(uuid)?.muted == true)
    }

    @Test func muteOfACallNotUnderWayFails() {
        let h = BridgeHarness()
        let uuid = CallUUID.of(callId: "gone")
        h.caller.screen.setMuted(uuid, true)
        #expect(h.caller.screen.events == [.completed(.mute, uuid, fulfilled: false)])
    }
}
