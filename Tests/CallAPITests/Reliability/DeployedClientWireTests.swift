import CallAPI
import CallAPITesting
import Testing

/// What the deployed clients put on the wire, read as they write it (wire-format.md, "Envelope" and the
/// busy paragraph), and what we never do to them.
@Suite("Wire compatibility with the deployed clients")
struct DeployedClientWireTests {
    /// The Web client's call: no `messageId`, `remoteUserId` in every message.
    static let webCall =
        #"{"fromUserId":2,"remoteUserId":1,"fromRoomId":"room-2","message_action":0,"#
        + #""callId":"web-1","message_version":"1.0","message_timestamp":1767225600000}"#

    @Test func aMessageWithoutMessageIdIsDecoded() throws {
        let message = try CallMessage.decode(Self.webCall).message
        #expect(message.messageId == nil)
        #expect(message.callId == "web-1")
        #expect(jsonObject(message.encoded())?["messageId"] == nil)
    }

    @Test func aCallWithoutMessageIdRings() {
        var driver = MachineDriver(.prepared)
        driver.receive(text: Self.webCall, from: 2)
        #expect(driver.machine.state == .calling)
    }

    /// Without a messageId, a repeat is known by sender, callId and action.
    @Test func aRepeatWithoutMessageIdIsHandledOnce() {
        var driver = MachineDriver(.prepared)
        let first = driver.receive(text: Self.webCall, from: 2)
        let second = driver.receive(text: Self.webCall, from: 2)
        #expect(first.states == [.calling])
        #expect(second.onlyLogs)
    }

    /// The same action without messageId for another call is not a repeat: a cancel of call 1 does not
    /// hide the cancel of call 2.
    @Test func aCancelWithoutMessageIdForANewCallIsNotARepeat() {
        var driver = MachineDriver(.prepared)
        for callId in ["w1", "w2"] {
            driver.receive(text: Self.webCall.replacingOccurrences(of: "web-1", with: callId), from: 2)
            #expect(driver.machine.state == .calling)
            let cancel =
                #"{"fromUserId":2,"message_action":1,"cancelCallByInternal":0,"callId":""# + callId
                + #"","message_version":"1.0","message_timestamp":1767225600000}"#
            let actions = driver.receive(text: cancel, from: 2)
            #expect(actions.reasons == [.remoteCancelled])
        }
    }

    /// Both deployed clients stamp their busy reject with their own current callId.
    @Test(arguments: [kRejectReasonCallBusy, "busy"])
    func aBusyRejectCarryingThePeersOwnCallIdIsBusy(_ reason: String) {
        var driver = MachineDriver(.callingAsCaller)
        let actions = driver.receive(.reject, callId: "their-own-call") {
            $0.rejectByInternal = true
            $0.rejectReason = reason
        }
        #expect(actions.reasons == [.remoteCallBusy])
        #expect(actions.events.contains(.remoteCallBusy))
        #expect(actions.eventReason(of: .remoteCallBusy) == reason)
    }

    @Test func aBusyRejectFromSomeoneElseIsNotBusy() {
        var driver = MachineDriver(.callingAsCaller)
        let actions = driver.receive(.reject, callId: "their-own-call", from: MachineDriver.otherId) {
            $0.rejectByInternal = true
        }
        #expect(actions.onlyLogs)
        #expect(driver.machine.state == .calling)
    }

    /// A plain reject with another callId is still for another call; only busy is matched by user.
    @Test func aPlainRejectCarryingAnotherCallIdIsIgnored() {
        var driver = MachineDriver(.callingAsCaller)
        let actions = driver.receive(.reject, callId: "their-own-call")
        #expect(actions.onlyLogs)
        #expect(driver.machine.state == .calling)
    }

    /// Our own endpoints stamp the call they refuse: a marked busy reject of an earlier call (late, or
    /// redelivered) does not end the current one.
    @Test func aMarkedBusyRejectOfAnotherCallIsIgnored() {
        var driver = MachineDriver(.callingAsCaller)
        driver.receive(.reject, callId: "earlier-call") {
            $0.rejectByInternal = true
            $0.reliable = true
        }
        #expect(driver.machine.state == .calling)
    }

    /// No retry timer for a message to a peer that has not shown it acknowledges; one once it has.
    @Test func retriesOnlyTowardAPeerKnownToAcknowledge() {
        var driver = MachineDriver(.prepared)
        let call = driver.handle(.call(remoteUserId: 2, type: .video, extension: nil, callId: "c"))
        #expect(!call.contains { if case .startTimer(.retry, _) = $0 { true } else { false } })
        let callId = call.sent.first?.message.messageId
        driver.receive(.ack, callId: "c") {
            $0.ackMessageId = callId
            $0.reliable = true
        }
        let cancel = driver.handle(.cancel)
        #expect(cancel.contains { if case .startTimer(.retry, _) = $0 { true } else { false } })
    }
}
