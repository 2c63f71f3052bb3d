import CallAPI
import Foundation
import Testing

@testable import CallAPISystemCall

@Suite("System call bridge machine")
struct SystemCallBridgeMachineTests {
    let now: Int64 = 1_767_225_600_000

    @Test(arguments: [
        (CallStateReason.remoteHangup, CallEnding.remote(.remoteEnded)),
        (.remoteCancelled, .remote(.remoteEnded)),
        (.remoteRejected, .remote(.remoteEnded)),
        (.remoteCallBusy, .remote(.remoteEnded)),
        (.callingTimeout, .remote(.unanswered)),
        (.remoteCallingTimeout, .remote(.unanswered)),
        (.joinRTCFailed, .remote(.failed)),
        (.messageFailed, .remote(.failed)),
        (.peerLost, .remote(.failed)),
        (.localHangup, .local),
        (.localCancelled, .local),
        (.localRejected, .local),
    ])
    func callAPIReasonsMapToTheSystemScreensEndings(reason: CallStateReason, ending: CallEnding) {
        #expect(CallEnding(reason) == ending)
        #expect(
            CallAPIUpdate(state: .prepared, reason: reason, eventInfo: [kCallId: "c"]) == .ended(callId: "c", ending))
    }

    @Test func aRingingStateChangeCarriesTheCallerAndTheNameFromItsExtension() {
        let info: [String: Any] = [
            kCallId: "c", kFromUserId: UInt(7), kFromUserExtension: ["displayName": "Ada"] as [String: Any],
        ]
        #expect(
            CallAPIUpdate(state: .calling, reason: .remoteAudioCall, eventInfo: info)
                == .ringing(callId: "c", callerId: 7, video: false, callerName: "Ada"))
        #expect(CallAPIUpdate(state: .prepared, reason: .none, eventInfo: [:]) == nil)
    }

    @Test func aCallEndedAsAnsweredElsewhereWhileRingingIsReportedSo() {
        var machine = SystemCallBridgeMachine()
        let ring = machine.handle(
            .callAPI(.ringing(callId: "c", callerId: 7, video: true, callerName: nil)), now: now)
        let uuid = CallUUID.of(callId: "c")
        #expect(
            ring == [
                .reportIncoming(
                    SystemCallReport(uuid: uuid, callId: "c", remoteUserId: 7, displayName: nil, video: true))
            ])
        let end = machine.handle(.callAPI(.ended(callId: "c", .remote(.answeredElsewhere))), now: now)
        #expect(end == [.reportEnded(uuid, .answeredElsewhere)])
        #expect(machine.state == .idle)
    }

    @Test func anEndingOfAnotherCallIsIgnored() {
        var machine = SystemCallBridgeMachine()
        _ = machine.handle(.callAPI(.ringing(callId: "c", callerId: 7, video: true, callerName: nil)), now: now)
        #expect(machine.handle(.callAPI(.ended(callId: "old", .remote(.remoteEnded))), now: now).isEmpty)
        #expect(machine.call?.report.callId == "c")
    }

    @Test func thePushedCallWaitsForSignalingUntilItsDeadlinePlusGraceButNoLongerThanTheCap() {
        let config = SystemCallBridgeConfiguration(arrivalGraceMillis: 2_000, maxArrivalWaitMillis: 30_000)
        var machine = SystemCallBridgeMachine(configuration: config)
        let soon = SystemCallPush(
            callId: "a", callerId: 1, callerName: nil, video: true, ringDeadlineMillis: now + 5_000)
        #expect(machine.handle(.pushReceived(soon), now: now).last == .startTimer(.arrival(callId: "a"), millis: 7_000))

        var other = SystemCallBridgeMachine(configuration: config)
        let far = SystemCallPush(
            callId: "b", callerId: 1, callerName: nil, video: true, ringDeadlineMillis: now + 600_000)
        #expect(other.handle(.pushReceived(far), now: now).last == .startTimer(.arrival(callId: "b"), millis: 30_000))
    }

    @Test func theSameCallersNextCallReplacesThePushedOneOnTheSameSystemCall() {
        var machine = SystemCallBridgeMachine()
        let push = SystemCallPush(
            callId: "a", callerId: 1, callerName: nil, video: true, ringDeadlineMillis: now + 9_000)
        _ = machine.handle(.pushReceived(push), now: now)
        let ring = machine.handle(.callAPI(.ringing(callId: "b", callerId: 1, video: true, callerName: nil)), now: now)
        #expect(ring == [.stopTimer(.arrival(callId: "a"))])
        #expect(machine.call?.uuid == push.uuid)
        #expect(machine.call?.report.callId == "b")
    }

    @Test func rememberedEndingsAreBounded() {
        var ended = EndedCalls()
        for index in 0..<(EndedCalls.capacity + 10) { ended.insert("call-\(index)", reason: .failed) }
        #expect(ended.reason(of: "call-0") == nil)
        #expect(ended.reason(of: "call-\(EndedCalls.capacity + 9)") == .failed)
        #expect(ended.reason(of: "call-10") == .failed)
    }
}
