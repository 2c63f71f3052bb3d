// A user logged in on several devices (docs/multi-device.md). Every device of the callee user rings; the first
// accept the caller receives wins and binds the call to that device; the caller then ignores the other devices
// and tells them the call is settled with a cancel naming the winner (or the device that rejected). Our server
// also copies each device's messages to the user's other devices, so they learn of an accept or reject at once.
extension CallStateMachine {
    /// A message this user sent from another device, copied here by the channel. An accept or a reject of the
    /// call ringing here settles it on this device too; anything else is not for this device.
    mutating func receiveFromOwnDevice(_ message: CallMessage, now: Int64, into actions: inout [CallAction]) {
        guard let deviceId, let other = message.deviceId, other != deviceId else {
            return actions.append(.log(.warning, "message from this user to itself dropped"))
        }
        guard case .inCall(let endpoint, let call) = phase, call.id == message.callId, call.role == .callee,
            message.action == .accept || message.action == .reject
        else { return }
        if call.stage != .ringing {
            if message.action == .accept {
                return bothAccepted(call, endpoint, other: message, now: now, into: &actions)
            }
            return rejectedAfterAccept(call, endpoint, other: message, now: now, into: &actions)
        }
        let answered = message.action == .accept
        actions.append(.log(.normal, "call \(call.id) was \(answered ? "accepted" : "rejected") on device \(other)"))
        endCall(
            .prepared, answered ? .answeredElsewhere : .rejectedElsewhere,
            event: answered ? .answeredElsewhere : .rejectedElsewhere, endedBy: endpoint.userId, now: now,
            into: &actions)
    }

    /// A message of the current call from a device of the peer user that the call is not with: it must not act
    /// on the call (its reject, cancel, timeout or hangup would end a call answered elsewhere). Appends what
    /// to do instead and returns true, or returns false when the message is for the normal path.
    mutating func receiveFromOtherDevice(
        _ message: CallMessage, sender: UInt, now: Int64, into actions: inout [CallAction]
    ) -> Bool {
        // The message's callId and sender are the call's id and peer from here on.
        guard !message.action.isCall,
            let (endpoint, peerDevice, isCaller) = phase.readCall({ endpoint, call in
                call.peer == sender && call.id == message.callId ? (endpoint, call.peerDevice, call.isCaller) : nil
            }) ?? nil
        else { return false }
        guard let bound = peerDevice else {
            // Before an accept binds the call, every device of the callee may answer keep-alives; one that never
            // rang (it came online later) says it is in no call, which says nothing of the others.
            guard isCaller, message.action == .ack, message.inCall == false, message.deviceId != nil else {
                return false
            }
            var ack = message
            ack.inCall = nil
            receiveAck(ack, from: sender, now: now, into: &actions)
            return true
        }
        guard message.deviceId != bound else { return false }
        let device = message.deviceId.map { "device \($0)" } ?? "a device without id"
        actions.append(
            .log(
                .normal,
                "\(message.action) of call \(message.callId) from \(device) ignored: the call is with \(bound)"))
        if message.action == .ack {
            // It still acknowledges what we sent to its user; whether it is in the call says nothing.
            var ack = message
            ack.inCall = nil
            receiveAck(ack, from: sender, now: now, into: &actions)
            return true
        }
        // A losing device that still acts on the call (or keeps it alive: it may have connected, its accept having
        // crossed the winner's) missed the caller's notice: say it again.
        if isCaller && message.deviceId != nil && (message.action.isCallFlow || message.action == .keepAlive) {
            settledNotice(
                callId: message.callId, peer: sender, endpoint, answeredBy: bound, after: message, now: now,
                into: &actions)
        }
        notInCallAcknowledgement(of: message, to: sender, endpoint, now: now, into: &actions)
        return true
    }

    /// Acknowledges a message from a device this endpoint is in no call with, saying so: that device's keep-alive
    /// check then ends its side even if every notice is lost.
    private mutating func notInCallAcknowledgement(
        of message: CallMessage, to peer: UInt, _ endpoint: Endpoint, now: Int64, into actions: inout [CallAction]
    ) {
        guard message.reliable, delivery.settings.acknowledges else { return }
        let ack = self.message(.ack, callId: message.callId, from: endpoint, now: now) {
            $0.ackMessageId = message.messageId
            $0.inCall = false
        }
        actions.append(.send(ack, to: peer, completesRequest: false))
    }

    /// The caller's cancel that names the device which accepted or rejected: this device stops ringing with
    /// its own reason and leaves RTC, telling the caller nothing; the named device itself ignores it.
    /// Returns false, appending nothing, for any other message.
    mutating func settledByCaller(
        _ message: CallMessage, info: EventInfo, now: Int64, into actions: inout [CallAction]
    ) -> Bool {
        guard message.action == .cancelCall, case .inCall(let endpoint, let call) = phase, call.role == .callee
        else { return false }
        let answered = message.answeredByDevice != nil
        guard let device = message.answeredByDevice ?? message.rejectedByDevice else { return false }
        if device == deviceId {
            // The caller has settled the call on this device: the other devices hear it from the caller too.
            guard call.hasOwnDeviceNotice else {
                actions.append(.log(.normal, "call \(call.id): the caller's notice names this device; nothing to do"))
                return true
            }
            var settled = call
            settled.ownDeviceNotice = nil
            phase = .inCall(endpoint, settled)
            actions.append(
                .log(.normal, "call \(call.id): the caller's notice names this device; its own-device notice stops"))
            actions.append(.stopTimer(.ownDeviceNotice(callId: call.id)))
            return true
        }
        endCall(
            .prepared, answered ? .answeredElsewhere : .rejectedElsewhere,
            event: answered ? .answeredElsewhere : .rejectedElsewhere, endedBy: endpoint.userId, info: info, now: now,
            into: &actions)
        return true
    }

    /// The caller's notice to every device of the callee user that `call` is settled: a cancel naming the
    /// device that accepted (or rejected), sent on `trigger` (that device's accept or reject, or a losing
    /// device's message). Only when both sides speak our reliability extension (docs/multi-device.md, "The
    /// settled notice"): an existing client's accept carries no device id, and a cancel without one would end
    /// its call; with reliability off this endpoint sends exactly the 1.0 messages, so no notice either (our
    /// server's copies still stop the other devices).
    /// Sent by the caller only: `callId` and `peer` are those of a call this endpoint placed.
    mutating func settledNotice(
        callId: String, peer: UInt, _ endpoint: Endpoint, answeredBy device: String? = nil,
        rejectedBy rejecter: String? = nil, after trigger: CallMessage, now: Int64, into actions: inout [CallAction]
    ) {
        guard device != nil || rejecter != nil, delivery.settings.acknowledges, trigger.reliable else { return }
        let notice = message(.cancelCall, callId: callId, from: endpoint, now: now) {
            $0.answeredByDevice = device
            $0.rejectedByDevice = rejecter
        }
        send(notice, to: peer, now: now, into: &actions)
    }

    // MARK: - When the caller sends no notice

    /// Starts repeating this device's accept to its own user's other devices, so that a device still ringing
    /// stops even when its copy was lost: only if this device speaks the reliability extension and names
    /// itself. The first goes at once (a channel that copies may have lost its copy, one that does not copy
    /// made none); the repeats follow the retry layer's backoff, until the retry bound, the end of the call,
    /// or the caller's notice naming this device.
    /// Returns the notice for the call `callId` to keep, or nil when there is none to repeat.
    func startOwnDeviceNotice(
        callId: String, accept: CallMessage, _ endpoint: Endpoint, into actions: inout [CallAction]
    ) -> OwnDeviceNotice? {
        guard deviceId != nil, delivery.settings.acknowledges else { return nil }
        let first = delivery.settings.firstRetryMillis
        actions.append(.send(accept, to: endpoint.userId, completesRequest: false))
        actions.append(.startTimer(.ownDeviceNotice(callId: callId), millis: first))
        return OwnDeviceNotice(accept: accept, nextDelay: first)
    }

    /// The repeat timer of this device's own-device notice: send it again while the call lasts, within the retry
    /// layer's bound from the accept.
    mutating func repeatOwnDeviceNotice(_ callId: String, now: Int64, into actions: inout [CallAction]) {
        guard case .inCall(let endpoint, var call) = phase, call.id == callId, var notice = call.ownDeviceNotice,
            now.saturatingMinus(notice.accept.timestamp) < delivery.settings.retryBoundMillis
        else { return }
        // The wait doubles after each repeat (0.5, 1, 2, 4 s … from the accept), as the retry layer's does.
        let delay = notice.nextDelay
        notice.nextDelay = min(delay.saturatingPlus(delay), delivery.settings.maxRetryIntervalMillis)
        call.ownDeviceNotice = notice
        phase = .inCall(endpoint, call)
        actions.append(.send(notice.accept, to: endpoint.userId, completesRequest: false))
        actions.append(.startTimer(.ownDeviceNotice(callId: callId), millis: notice.nextDelay))
    }

    /// The channel could not deliver the own-device notice (no other device of this user is online, or the
    /// channel takes no message to the sender's own user): stop repeating it. Not the app's concern.
    mutating func ownDeviceNoticeFailed(_ message: CallMessage, error: SendFailure, into actions: inout [CallAction]) {
        guard case .inCall(let endpoint, var call) = phase, call.id == message.callId, call.hasOwnDeviceNotice
        else {
            return actions.append(
                .log(.normal, "own-device notice of call \(message.callId) not sent: \(error.message)"))
        }
        call.ownDeviceNotice = nil
        phase = .inCall(endpoint, call)
        actions.append(.log(.normal, "own-device notice of call \(call.id) not sent (\(error.message)): not repeated"))
        actions.append(.stopTimer(.ownDeviceNotice(callId: call.id)))
    }

    /// This device accepted `call` and learns that another device of its user rejected it (before it heard of
    /// this accept). A caller that settles the call has bound it to the first accept and ignores the reject. A
    /// caller that does not (an existing client) ends its call on any reject from this user, whichever arrives
    /// first, so this device ends too, telling the caller nothing: a hangup arriving after that caller's next
    /// call started would end that one instead.
    private mutating func rejectedAfterAccept(
        _ call: Call, _ endpoint: Endpoint, other: CallMessage, now: Int64, into actions: inout [CallAction]
    ) {
        guard !call.callerSendsNotice else {
            return actions.append(
                .log(.normal, "call \(call.id) rejected on another device after this one accepted: ignored"))
        }
        actions.append(
            .log(.normal, "call \(call.id) was rejected on another device: the caller ends it on that reject"))
        endCall(
            .prepared, .rejectedElsewhere, event: .rejectedElsewhere, endedBy: endpoint.userId, now: now,
            into: &actions)
    }

    /// This device accepted `call` and learns that another device of its user accepted it too. With a caller
    /// that settles the call, the caller's notice decides. Without one, the earlier accept wins (then the lower
    /// device id): the loser leaves as if answered elsewhere, telling the caller nothing; the winner repeats its
    /// accept at once, so that a loser whose copies of it were all lost learns from this answer.
    private mutating func bothAccepted(
        _ call: Call, _ endpoint: Endpoint, other: CallMessage, now: Int64, into actions: inout [CallAction]
    ) {
        guard !call.callerSendsNotice, let notice = call.ownDeviceNotice, let device = other.deviceId else {
            return actions.append(
                .log(.normal, "call \(call.id) also accepted on another device: the caller's notice decides"))
        }
        guard notice.losesTo(other) else {
            actions.append(
                .log(.normal, "call \(call.id) also accepted on device \(device), later: this device keeps it"))
            actions.append(.send(notice.accept, to: endpoint.userId, completesRequest: false))
            return
        }
        actions.append(.log(.normal, "call \(call.id) was accepted earlier on device \(device)"))
        endCall(
            .prepared, .answeredElsewhere, event: .answeredElsewhere, endedBy: endpoint.userId, now: now,
            into: &actions)
    }
}
