// The reliability layer (ours, issue "calls that never get stuck"): acknowledgements and retries of call
// messages, keep-alives and the peer-silence check, and the RTC remote-left grace period. Between two of
// our endpoints every call message carries `reliability: 1`; a peer whose messages lack it is treated as a
// wire-format-1.0 client and is never sent acknowledgements, keep-alives or retries.
extension CallStateMachine {
    /// Registers every new reliable send of `actions` for retrying until acknowledged, when its receiver has
    /// shown that it acknowledges: the deployed 1.0 clients do not de-duplicate, so a message is never sent
    /// twice to a peer not known to acknowledge (wire-format.md, "How the deployed clients treat repeats").
    mutating func trackReliableSends(_ actions: [CallAction], now: Int64) -> [CallAction] {
        guard reliability.acknowledges, userId != nil else { return actions }
        var result = actions
        for case .send(let message, let to, _) in actions
        where message.action.isCallFlow && message.reliable && peerCapabilities[to] == true {
            guard let id = message.messageId, outstanding[id] == nil else { continue }
            outstanding[id] = OutstandingMessage(
                message: message, to: to, firstSentAt: now, nextDelay: reliability.firstRetryMillis)
            result.append(.startTimer(.retry(messageId: id), millis: reliability.firstRetryMillis))
        }
        return result
    }

    /// Arms the keep-alive and silence timers once the current call's peer is known to keep alive.
    mutating func armLivenessTimers(now: Int64) -> [CallAction] {
        guard reliability.keepsAlive, let call, call.peerReliable, state.isInCall else { return [] }
        var actions: [CallAction] = []
        if !call.keepAliveArmed {
            updateCall { $0.keepAliveArmed = true }
            actions.append(.startTimer(.keepAlive(callId: call.callId), millis: keepAliveInterval))
        }
        if !call.silenceArmed {
            updateCall { $0.silenceArmed = true }
            actions.append(.startTimer(.peerSilence(callId: call.callId), millis: silenceWindow))
        }
        return actions
    }

    private var keepAliveInterval: Int64 {
        state == .connected ? reliability.keepAliveConnectedMillis : reliability.keepAliveRingingMillis
    }

    private var silenceWindow: Int64 {
        state == .connected ? reliability.peerSilenceConnectedMillis : reliability.peerSilenceRingingMillis
    }

    /// Learns what a received message tells about its sender; notes that the current call's peer is alive.
    mutating func noteReceived(_ message: CallMessage, from sender: UInt, now: Int64) {
        if message.reliable || message.action.isCallFlow {
            peerCapabilities.learn(sender, acknowledges: message.reliable)
        }
        guard let call, call.peer == sender, call.callId == message.callId else { return }
        updateCall {
            $0.lastHeardAt = now
            if message.reliable { $0.peerReliable = true }
        }
    }

    /// The acknowledgement of a received message, when its sender wants one.
    mutating func acknowledgement(of message: CallMessage, from sender: UInt, now: Int64) -> [CallAction] {
        guard message.reliable, reliability.acknowledges, message.action != .ack, let id = message.messageId else {
            return []
        }
        let inCall = call?.peer == sender
        let ack = self.message(.ack, callId: message.callId, now: now) {
            $0.ackMessageId = id
            $0.inCall = inCall
        }
        return [.send(ack, to: sender, completesRequest: false)]
    }

    mutating func receiveAck(_ ack: CallMessage, from sender: UInt, now: Int64) -> [CallAction] {
        guard let id = ack.ackMessageId else { return [] }
        var actions: [CallAction] = []
        if let entry = outstanding[id], entry.to == sender {
            outstanding[id] = nil
            actions.append(.stopTimer(.retry(messageId: id)))
        }
        // The peer answers our keep-alive saying it is in no call with us: our call is over on its side.
        if ack.inCall == false, let call, call.peer == sender, call.callId == ack.callId,
            call.keepAliveIds.contains(id)
        {
            actions += peerLost(because: "user \(sender) is no longer in call \(call.callId)", now: now)
        }
        return actions
    }

    mutating func timerFired(_ timer: CallTimerID, now: Int64) -> [CallAction] {
        guard userId != nil else { return [] }
        switch timer {
        case .retry(let id):
            return retry(id, now: now)
        case .keepAlive(let callId):
            guard let call, call.callId == callId, call.keepAliveArmed else { return [] }
            let keepAlive = message(.keepAlive, callId: callId, now: now)
            updateCall { $0.keepAliveIds = Array(($0.keepAliveIds + [keepAlive.messageId ?? 0]).suffix(8)) }
            return [
                .send(keepAlive, to: call.peer, completesRequest: false),
                .startTimer(.keepAlive(callId: callId), millis: keepAliveInterval),
            ]
        case .peerSilence(let callId):
            guard let call, call.callId == callId, call.silenceArmed else { return [] }
            let silent = now - call.lastHeardAt
            guard silent >= silenceWindow else {
                return [.startTimer(.peerSilence(callId: callId), millis: silenceWindow - silent)]
            }
            return peerLost(because: "no word from user \(call.peer) for \(silent) ms", now: now)
        case .remoteLeftGrace(let callId):
            guard let call, call.callId == callId, call.remoteLeftArmed else { return [] }
            updateCall { $0.remoteLeftArmed = false }
            return peerLost(
                because: "user \(call.peer) left the RTC channel \(reliability.remoteLeftGraceMillis) ms ago", now: now)
        }
    }

    private mutating func retry(_ id: Int, now: Int64) -> [CallAction] {
        guard var entry = outstanding[id] else { return [] }
        let message = entry.message
        let stillUseful: Bool
        switch message.action {
        case .videoCall, .audioCall: stillUseful = call?.callId == message.callId && state == .calling
        case .accept: stillUseful = call?.callId == message.callId
        default: stillUseful = true
        }
        guard stillUseful, peerCapabilities[entry.to] == true, now - entry.firstSentAt < reliability.retryBoundMillis
        else {
            outstanding[id] = nil
            return [.log(.normal, "stopped retrying \(message.action) \(id) of call \(message.callId)")]
        }
        entry.attempts += 1
        entry.nextDelay = min(entry.nextDelay * 2, reliability.maxRetryIntervalMillis)
        outstanding[id] = entry
        return [
            .log(.normal, "retrying \(message.action) \(id) of call \(message.callId) (attempt \(entry.attempts + 1))"),
            .send(message, to: entry.to, completesRequest: false),
            .startTimer(.retry(messageId: id), millis: entry.nextDelay),
        ]
    }

    /// The RTC engine says the peer left the channel: give it a grace period to come back (or for its
    /// hangup to arrive) before ending the call. This is what ends calls with 1.0 peers whose hangup is lost.
    mutating func remoteLeftChannel(now: Int64) -> [CallAction] {
        guard reliability.remoteLeftGraceMillis > 0, let call, !call.remoteLeftArmed else { return [] }
        updateCall { $0.remoteLeftArmed = true }
        return [.startTimer(.remoteLeftGrace(callId: call.callId), millis: reliability.remoteLeftGraceMillis)]
    }

    mutating func remoteRejoinedChannel() -> [CallAction] {
        guard let call, call.remoteLeftArmed else { return [] }
        updateCall { $0.remoteLeftArmed = false }
        return [.stopTimer(.remoteLeftGrace(callId: call.callId))]
    }

    /// Ends the current call because the peer is gone, telling it too in case it is merely slow.
    private mutating func peerLost(because why: String, now: Int64) -> [CallAction] {
        guard let call else { return [] }
        return [
            .log(.warning, "call \(call.callId) ended: \(why)"),
            .send(endingMessage(reason: "peerLost", now: now), to: call.peer, completesRequest: false),
        ]
            + endCall(.prepared, .peerLost, event: .peerLost, endedBy: call.peer, eventReason: why, now: now)
    }

    /// Whether a failed send is a retry (its failure is logged, not reported again).
    func isRetry(_ message: CallMessage) -> Bool {
        guard let id = message.messageId else { return false }
        return (outstanding[id]?.attempts ?? 0) > 0
    }
}
