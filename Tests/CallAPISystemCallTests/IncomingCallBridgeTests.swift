import CallAPI
import CallAPISystemCall
import CallAPISystemCallTesting
import Foundation
import Testing

@Suite("System call bridge: incoming calls")
struct IncomingCallBridgeTests {
    @Test func pushThenSignalingShowsOneSystemCallThatConnectsWhenAnswered() throws {
        let h = BridgeHarness()
        let push = h.callWhileCalleeIsAsleep()
        h.callee.screen.deliverVoIPPush(push)

        let shown = try #require(h.callee.screen.calls.first)
        #expect(shown.report.uuid == CallUUID.of(callId: push.callId))
        #expect(shown.report.displayName == "Ada")
        #expect(shown.report.remoteUserId == 1)
        #expect(shown.status == .ringing)
        #expect(h.callee.api.state == .prepared)

        h.calleeLogsIn()
        #expect(h.callee.api.state == .calling)
        #expect(h.callee.screen.calls.count == 1)
        #expect(h.callee.screen.events == [.reportedIncoming(shown.report.uuid)])
        // The arrival bound no longer applies once signaling has the call.
        h.clock.advance(byMillis: 5_000)
        #expect(h.callee.screen.call(shown.report.uuid)?.status == .ringing)

        h.callee.screen.answer(shown.report.uuid)
        #expect(h.callee.api.state == .connected)
        #expect(h.caller.api.state == .connected)
        #expect(h.callee.screen.call(shown.report.uuid)?.status == .active)
        #expect(h.callee.screen.events.last == .completed(.answer, shown.report.uuid, fulfilled: true))
        #expect(h.callee.screen.violations.isEmpty)
        #expect(h.callee.screen.pendingActionCount == 0)
    }

    @Test func answerOnTheSystemScreenBeforeSignalingConnectsIsFulfilledOnceTheCallIsConnecting() throws {
        let h = BridgeHarness()
        let push = h.callWhileCalleeIsAsleep()
        h.callee.screen.deliverVoIPPush(push)
        h.callee.screen.answer(push.uuid)
        #expect(h.callee.screen.pendingActionCount == 1)
        #expect(!h.callee.screen.events.contains(.completed(.answer, push.uuid, fulfilled: true)))

        h.calleeLogsIn()
        #expect(h.callee.api.state == .connected)
        #expect(h.caller.api.state == .connected)
        #expect(h.callee.api.getCallId() == push.callId)
        #expect(h.callee.screen.call(push.uuid)?.status == .active)
        #expect(h.callee.screen.pendingActionCount == 0)
        #expect(h.callee.screen.calls.count == 1)
        #expect(h.callee.screen.violations.isEmpty)
    }

    @Test func anAnswerThatNeverConnectsFailsAfterTheBoundAndEndsTheCall() {
        let config = SystemCallBridgeConfiguration(answerTimeoutMillis: 4_000)
        let h = BridgeHarness(configuration: config)
        h.network.partition(1, 2)  // the woken app's signaling never gets the call
        h.caller.api.call(remoteUserId: 2, callType: .video, callExtension: [:], completion: nil)
        let push = h.push()
        h.callee.screen.deliverVoIPPush(push)
        h.callee.screen.answer(push.uuid)

        h.clock.advance(byMillis: 3_999)
        #expect(h.callee.screen.pendingActionCount == 1)
        h.clock.advance(byMillis: 1)
        #expect(
            h.callee.screen.events.suffix(2) == [
                .completed(.answer, push.uuid, fulfilled: false), .ended(push.uuid, .failed),
            ])
        #expect(h.callee.screen.call(push.uuid)?.status == .ended(.failed))
        #expect(h.callee.bridge.currentCallUUID == nil)
        #expect(h.callee.screen.violations.isEmpty)
    }

    @Test func declineOnTheSystemScreenRejectsTheRingingCall() throws {
        let h = BridgeHarness()
        h.caller.api.call(remoteUserId: 2, callType: .audio, callExtension: [:], completion: nil)
        let shown = try #require(h.callee.screen.calls.first)
        #expect(shown.report.video == false)
        #expect(shown.report.displayName == "Ada")

        h.callee.screen.end(shown.report.uuid)
        #expect(h.callee.api.state == .prepared)
        #expect(h.caller.api.state == .prepared)
        #expect(h.callee.screen.call(shown.report.uuid)?.status == .ended(nil))
        #expect(h.callee.screen.events.last == .completed(.end, shown.report.uuid, fulfilled: true))
        #expect(h.callee.screen.violations.isEmpty)
    }

    @Test func aPushedCallDeclinedBeforeItArrivesIsRejectedWhenItDoesAndNotShownAgain() {
        let h = BridgeHarness()
        let listener = StateRecorder()
        h.caller.api.addListener(listener: listener)
        let push = h.callWhileCalleeIsAsleep()
        h.callee.screen.deliverVoIPPush(push)
        h.callee.screen.end(push.uuid)

        h.calleeLogsIn()
        #expect(h.caller.api.state == .prepared)
        #expect(listener.reasons.last == .remoteRejected)
        #expect(h.callee.api.state == .prepared)
        #expect(h.callee.screen.calls.count == 1)
        #expect(h.callee.screen.call(push.uuid)?.status == .ended(nil))
        #expect(h.callee.screen.violations.isEmpty)
    }

    @Test func theCallerCancellingWhileItRingsEndsTheSystemCallAsRemoteEnded() throws {
        let h = BridgeHarness()
        h.caller.api.call(remoteUserId: 2, completion: nil)
        let shown = try #require(h.callee.screen.calls.first)
        h.caller.api.cancelCall(completion: nil)
        #expect(h.callee.api.state == .prepared)
        #expect(h.callee.screen.call(shown.report.uuid)?.status == .ended(.remoteEnded))
        #expect(h.callee.screen.violations.isEmpty)
    }

    @Test func aCallNobodyAnswersEndsAsUnanswered() throws {
        let h = BridgeHarness()
        h.caller.api.call(remoteUserId: 2, completion: nil)
        let shown = try #require(h.callee.screen.calls.first)
        h.clock.advance(byMillis: BridgeHarness.ringTimeoutMillis)
        #expect(h.callee.screen.call(shown.report.uuid)?.status == .ended(.unanswered))
        #expect(h.caller.screen.calls.first?.status == .ended(.unanswered))
    }

    @Test func aCallAnsweredOnAnotherDeviceEndsAsAnsweredElsewhere() {
        let h = BridgeHarness()
        let push = h.callWhileCalleeIsAsleep()
        h.callee.screen.deliverVoIPPush(push)
        h.callee.bridge.pushedCallWithdrawn(callId: push.callId, reason: .answeredElsewhere)
        #expect(h.callee.screen.call(push.uuid)?.status == .ended(.answeredElsewhere))
        #expect(h.callee.bridge.currentCallUUID == nil)
        // The held call message, if it still came, rings nothing.
        h.calleeLogsIn()
        #expect(h.callee.screen.calls.count == 1)
        #expect(h.callee.api.state == .prepared)
    }

    @Test func aTombstoneBeforeItsPushMakesThePushReportedAndEndedAtOnce() {
        let h = BridgeHarness()
        let push = h.callWhileCalleeIsAsleep()
        h.callee.bridge.pushedCallWithdrawn(callId: push.callId, reason: .declinedElsewhere)
        h.callee.screen.deliverVoIPPush(push)
        #expect(h.callee.screen.events == [.reportedIncoming(push.uuid), .ended(push.uuid, .declinedElsewhere)])
        #expect(h.callee.screen.violations.isEmpty)
    }

    @Test func aPushedCallThatNeverArrivesOverSignalingIsEnded() {
        let h = BridgeHarness()
        h.network.partition(1, 2)
        h.caller.api.call(remoteUserId: 2, callType: .video, callExtension: [:], completion: nil)
        let push = h.push(ringingFor: 10_000)
        h.callee.screen.deliverVoIPPush(push)

        // Until the ring deadline plus the grace for clock differences.
        h.clock.advance(byMillis: 11_999)
        #expect(h.callee.screen.call(push.uuid)?.status == .ringing)
        h.clock.advance(byMillis: 1)
        #expect(h.callee.screen.call(push.uuid)?.status == .ended(.failed))
        #expect(h.callee.bridge.currentCallUUID == nil)
        #expect(h.callee.logs.all.contains { $0.contains("did not arrive") })
    }

    @Test func aPushThatComesAfterItsRingDeadlineIsStillReportedAndEndedAtOnce() {
        let h = BridgeHarness()
        h.network.partition(1, 2)  // nothing reaches the sleeping app, not even the caller's retries
        h.caller.api.call(remoteUserId: 2, callType: .video, callExtension: [:], completion: nil)
        let push = h.push()
        h.clock.advance(byMillis: BridgeHarness.ringTimeoutMillis + 5_000)
        h.callee.screen.deliverVoIPPush(push)
        #expect(h.callee.screen.events == [.reportedIncoming(push.uuid), .ended(push.uuid, .unanswered)])
        #expect(h.callee.screen.violations.isEmpty)
    }

    @Test func anUnreadablePushIsStillReportedAndEndedAsFailed() throws {
        let h = BridgeHarness()
        h.callee.screen.deliverVoIPPush(payload: ["callapi": ["v": 1, "callId": ""]])
        let shown = try #require(h.callee.screen.calls.first)
        #expect(shown.status == .ended(.failed))
        #expect(h.callee.screen.violations.isEmpty)
        #expect(h.callee.logs.all.contains { $0.contains("\"callId\" is invalid") })
    }

    @Test func aPushForAnotherCallDuringACallIsReportedAndEndedAsMissed() throws {
        let h = BridgeHarness()
        h.caller.api.call(remoteUserId: 2, completion: nil)
        let ongoing = try #require(h.callee.screen.calls.first)
        let other = SystemCallPush(
            callId: "another-call", callerId: 3, callerName: nil, video: false,
            ringDeadlineMillis: h.clock.nowMillis() + 10_000)
        h.callee.screen.deliverVoIPPush(other)
        #expect(h.callee.screen.call(other.uuid)?.status == .ended(.unanswered))
        #expect(h.callee.screen.call(ongoing.report.uuid)?.status == .ringing)
        #expect(h.callee.screen.violations.isEmpty)
    }

    @Test func aDuplicatePushForTheCallOnScreenAddsNoSecondCall() {
        let h = BridgeHarness()
        let push = h.callWhileCalleeIsAsleep()
        h.callee.screen.deliverVoIPPush(push)
        h.callee.screen.deliverVoIPPush(push)
        #expect(h.callee.screen.calls.count == 1)
        #expect(h.callee.screen.events == [.reportedIncoming(push.uuid), .alreadyReported(push.uuid)])
        #expect(h.callee.screen.violations.isEmpty)
    }
}

/// Records the state reasons a CallAPI endpoint reports.
final class StateRecorder: CallApiListenerProtocol {
    private let recorded = Locked<[CallStateReason]>([])
    var reasons: [CallStateReason] { recorded.withLock { $0 } }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        recorded.withLock { $0.append(stateReason) }
    }
}
