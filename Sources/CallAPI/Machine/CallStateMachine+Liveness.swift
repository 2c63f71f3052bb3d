// The reliability layer's part in the call (ours, reliability.md): acknowledging what peers send, retries
// as the nested DeliveryMachine decides them, keep-alives and the peer-silence check, and the RTC
// remote-left grace period. Between two of our endpoints every call message carries `reliability: 1`; a
// peer whose messages lack it is treated as a wire-format-1.0 client and is never sent acknowledgements,
// keep-alives or retries.
extension CallStateMachine {
    /// Learns what a received message tells about its sender; notes that the current call's peer is alive.
    mutating func noteReceived(_ message: CallMessage, from sender: UInt, now: Int64) {
        delivery.received(message, from: sender)
        phase.changeCall { _, call in
            guard call.peer == sender, call.id == message.callId else { return }
            call.liveness.lastHeardAt = now
            if message.reliable { call.liveness.keepsAlive = true }
        }
    }

    /// Arms the keep-alive and silence timers once the current call's peer is known to keep alive.
    mutating func armLivenessTimers(into actions: inout [CallAction]) {
        // Read first: on most messages both timers already run, and a change moves the whole phase.
        guard delivery.settings.keepsAlive,
            phase.readCall({ _, call in
                call.liveness.keepsAlive && !call.armed.isSuperset(of: [.keepAlive, .peerSilence])
            }) == true
        else { return }
        let settings = delivery.settings
        phase.changeCall { _, call in
            if call.armed.insert(.keepAlive).inserted {
                actions.append(.startTimer(.keepAlive(callId: call.id), millis: Self.keepAliveInterval(call, settings)))
            }
            if call.armed.insert(.peerSilence).inserted {
                actions.append(.startTimer(.peerSilence(callId: call.id), millis: Self.silenceWindow(call, settings)))
            }
        }
    }

    private func keepAliveInterval(_ call: Call) -> Int64 { Self.keepAliveInterval(call, delivery.settings) }

    private static func keepAliveInterval(_ call: Call, _ settings: CallReliability) -> Int64 {
        call.stage.state == .connected ? settings.keepAliveConnectedMillis : settings.keepAliveRingingMillis
    }

    private func silenceWindow(_ call: Call) -> Int64 { Self.silenceWindow(call, delivery.settings) }

    private static func silenceWindow(_ call: Call, _ settings: CallReliability) -> Int64 {
        call.stage.state == .connected ? settings.peerSilenceConnectedMillis : settings.peerSilenceRingingMillis
    }

    /// The acknowledgement of a received message, when its sender wants one.
    mutating func acknowledgement(
        of message: CallMessage, from sender: UInt, now: Int64, into actions: inout [CallAction]
    ) {
        guard message.reliable, delivery.settings.acknowledges, message.action != .ack, let id = message.messageId,
            let endpoint
        else { return }
        let inCall = isInCall(with: sender)
        let ack = self.message(.ack, callId: message.callId, from: endpoint, now: now) {
            $0.ackMessageId = id
            $0.inCall = inCall
        }
        actions.append(.send(ack, to: sender, completesRequest: false))
    }

    mutating func receiveAck(_ ack: CallMessage, from sender: UInt, now: Int64, into actions: inout [CallAction]) {
        guard let id = ack.ackMessageId else { return }
        delivery.acknowledged(id, by: sender, into: &actions)
        // The peer answers our keep-alive saying it is in no call with us: our call is over on its side.
        guard ack.inCall == false, case .inCall(_, let call) = phase, call.peer == sender, call.id == ack.callId,
            call.liveness.keepAliveIds.contains(id)
        else { return }
        peerLost(because: "user \(sender) is no longer in call \(call.id)", now: now, into: &actions)
    }

    /// A retry timer fell due: the delivery machine resends, if the message still means something.
    mutating func retryDue(_ id: Int, now: Int64, into actions: inout [CallAction]) {
        guard userId != nil, let message = delivery.outstandingMessage(id) else { return }
        let stillUseful: Bool
        switch message.action {
        case .videoCall, .audioCall: stillUseful = call?.id == message.callId && call?.stage == .ringing
        case .accept: stillUseful = call?.id == message.callId
        default: stillUseful = true
        }
        delivery.retryDue(id, stillUseful: stillUseful, now: now, into: &actions)
    }

    mutating func keepAliveDue(_ callId: String, now: Int64, into actions: inout [CallAction]) {
        guard case .inCall(let endpoint, var call) = phase, call.id == callId, call.armed.contains(.keepAlive)
        else { return }
        let keepAlive = message(.keepAlive, callId: callId, from: endpoint, now: now)
        call.liveness.keepAliveIds = Array((call.liveness.keepAliveIds + [keepAlive.messageId ?? 0]).suffix(8))
        phase = .inCall(endpoint, call)
        actions.append(.send(keepAlive, to: call.peer, completesRequest: false))
        actions.append(.startTimer(.keepAlive(callId: callId), millis: keepAliveInterval(call)))
    }

    mutating func peerSilenceCheck(_ callId: String, now: Int64, into actions: inout [CallAction]) {
        guard case .inCall(_, let call) = phase, call.id == callId, call.armed.contains(.peerSilence)
        else { return }
        let silent = now - call.liveness.lastHeardAt
        let window = silenceWindow(call)
        guard silent >= window else {
            return actions.append(.startTimer(.peerSilence(callId: callId), millis: window - silent))
        }
        peerLost(because: "no word from user \(call.peer) for \(silent) ms", now: now, into: &actions)
    }

    mutating func remoteLeftGraceOver(
        _ timer: CallTimerID, _ callId: String, now: Int64, into actions: inout [CallAction]
    ) {
        guard case .inCall(let endpoint, var call) = phase, call.id == callId, let kind = LivenessTimers(timer),
            call.armed.remove(kind) != nil
        else { return }
        phase = .inCall(endpoint, call)
        let how = timer == .remoteQuitGrace(callId: callId) ? "quit" : "left"
        peerLost(
            because: "user \(call.peer) \(how) the RTC channel \(delivery.settings.remoteLeftGraceMillis) ms ago",
            now: now, into: &actions)
    }

    /// The RTC engine says the peer left the channel: give it a grace period to come back (or for its
    /// hangup to arrive) before ending the call. This is what ends calls with 1.0 peers whose hangup is lost.
    /// A peer that does not acknowledge (an existing client, whose hangup or cancel is sent once) and `quit`
    /// (reason 0: it left on purpose, which it does only when its call ends) does not get this call back by
    /// joining again: it joins the same room for its next call, and that must not keep this call alive when its
    /// hangup was lost. A peer of ours retries its hangup and answers keep-alives, so a rejoin keeps its call.
    mutating func remoteLeftChannel(quit: Bool, into actions: inout [CallAction]) {
        let grace = delivery.settings.remoteLeftGraceMillis
        guard grace > 0, case .inCall(_, let call) = phase else { return }
        let final = quit && !delivery.acknowledges(call.peer)
        guard phase.changeCall({ $1.armed.insert(final ? .remoteQuitGrace : .remoteLeftGrace).inserted }) == true
        else { return }
        let timer: CallTimerID = final ? .remoteQuitGrace(callId: call.id) : .remoteLeftGrace(callId: call.id)
        actions.append(.startTimer(timer, millis: grace))
    }

    mutating func remoteRejoinedChannel(into actions: inout [CallAction]) {
        // Read first: the grace timer rarely runs, and a change moves the whole phase.
        guard let callId = phase.readCall({ _, call in call.armed.contains(.remoteLeftGrace) ? call.id : nil }) ?? nil
        else { return }
        phase.changeCall { $1.armed.remove(.remoteLeftGrace) }
        actions.append(.stopTimer(.remoteLeftGrace(callId: callId)))
    }

    /// Ends the current call because the peer is gone, telling it too in case it is merely slow.
    private mutating func peerLost(because why: String, now: Int64, into actions: inout [CallAction]) {
        guard case .inCall(let endpoint, let call) = phase else { return }
        let ending = endingMessage(endpoint, call, reason: "peerLost", now: now)
        actions.append(.log(.warning, "call \(call.id) ended: \(why)"))
        send(ending, to: call.peer, now: now, into: &actions)
        endCall(.prepared, .peerLost, event: .peerLost, endedBy: call.peer, eventReason: why, now: now, into: &actions)
    }
}
