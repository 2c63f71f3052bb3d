// What the machine does with messages from the signaling channel (call-behaviour.md, "Received messages").
extension CallStateMachine {
    mutating func receive(_ text: String, sender vouched: SignalSender?, now: Int64, into actions: inout [CallAction]) {
        guard let endpoint else { return actions.append(.log(.normal, "message ignored: not initialized")) }
        // Read into in place: returning the object and the message together copied both.
        var object = CallMessageObject()
        var message: CallMessage
        do {
            message = try CallMessage.decode(text, into: &object)
        } catch {
            return actions.append(.log(.normal, "message dropped: \(error)"))
        }
        // The channel's word on who sent it wins over the body's (docs/spec/wire-format.md, shortfall 4).
        var sender = message.fromUserId
        if let vouched {
            guard let id = UserID.canonical(vouched.userId) else {
                return actions.append(
                    .log(
                        .warning,
                        "message dropped: the channel's sender id \"\(vouched.userId)\" is not a user id in canonical "
                            + "decimal form"))
            }
            if id != message.fromUserId {
                actions.append(
                    .log(.warning, "message from user \(id) claims fromUserId \(message.fromUserId); using \(id)"))
            }
            sender = id
        }
        guard sender != endpoint.userId else { return receiveFromOwnDevice(message, now: now, into: &actions) }
        if let current = busyAnswerToCurrentCall(message, from: sender) {
            actions.append(
                .log(
                    .normal,
                    "busy reject from user \(sender) carries its own call \(message.callId): taken as the answer to "
                        + "\(current)"))
            message.callId = current
        }
        if receiveFromOtherDevice(message, sender: sender, now: now, into: &actions) { return }
        noteReceived(message, from: sender, now: now)
        if message.action == .ack {
            receiveAck(message, from: sender, now: now, into: &actions)
        } else if isRepeat(message, sender: sender) {
            // Handling a message twice equals handling it once (docs/spec/wire-format.md, shortfall 2); the sender
            // still gets its ack.
            let id = message.messageId.map(String.init) ?? "without messageId"
            actions.append(.log(.normal, "repeated \(message.action) \(id) of call \(message.callId) ignored"))
            acknowledgement(of: message, from: sender, now: now, into: &actions)
        } else {
            // The fields become the event info, made only here: acks and repeats never need them. The object moves
            // into it: a copy retained each of its members, and dropping the original released them again.
            handle(
                message, sender: sender, info: EventInfo(received: consume object),
                receivedAt: vouched?.receivedAtMillis, now: now, into: &actions)
            acknowledgement(of: message, from: sender, now: now, into: &actions)
        }
        // A message may be the first sign that the call's peer keeps alive.
        armLivenessTimers(into: &actions)
    }

    /// The deployed clients stamp their busy reject with the callId of their own current call, not ours
    /// (wire-format.md, the busy paragraph): a busy reject from the user this endpoint is calling is that
    /// user's answer to the current call, whatever its callId. Only for senders without the reliability
    /// mark: ours stamp the call they refuse, so a late busy of an earlier call cannot end this one.
    /// Returns the current call's id when `message` is such an answer to it (with another callId), else nil.
    private func busyAnswerToCurrentCall(_ message: CallMessage, from sender: UInt) -> String? {
        // Only the deployed clients (no reliability mark, no device id) stamp a busy reject with their own callId;
        // ours carries the call it answers, which may be another device's call of this user.
        guard message.action == .reject, message.rejectByInternal, !message.reliable, message.deviceId == nil,
            case .inCall(_, let call) = phase, call.stage == .ringing, call.role == .caller, call.peer == sender,
            call.id != message.callId
        else { return nil }
        return call.id
    }

    private mutating func handle(
        _ message: CallMessage, sender: UInt, info received: EventInfo, receivedAt: Int64?, now: Int64,
        into actions: inout [CallAction]
    ) {
        let info = received.sentBy(sender)

        if message.action.isCall {
            return receiveCall(message, sender: sender, info: info, receivedAt: receivedAt, now: now, into: &actions)
        }
        // Anything but a call acts only on the call whose callId it carries, from that call's peer
        // (docs/spec/wire-format.md, shortfall 1).
        let current = phase.readCall { endpoint, call in
            call.id == message.callId && call.peer == sender ? (endpoint, stage: call.stage, role: call.role) : nil
        }
        guard let (endpoint, stage, role) = current ?? nil else {
            return actions.append(
                .log(.normal, "\(message.action) for call \(message.callId) ignored: not the current call"))
        }
        if settledByCaller(message, info: info, now: now, into: &actions) { return }
        switch message.action {
        case .cancelCall:
            let timedOut = message.cancelCallByInternal
            endCall(
                .prepared, timedOut ? .remoteCallingTimeout : .remoteCancelled,
                event: timedOut ? .remoteCallingTimeout : .remoteCancelled, endedBy: sender, info: info, now: now,
                into: &actions)
        case .accept:
            guard stage == .ringing, role == .caller else {
                return actions.append(.log(.normal, "accept ignored in \(state)"))
            }
            phase.changeCall { _, call in
                call.stage = .connecting
                call.peerDevice = message.deviceId
                call.recordCost(.acceptCall, now: now)
            }
            actions.append(.stateChanged(.connecting, .remoteAccepted, info: info))
            actions.append(.notifyEvent(.remoteAccepted, reason: nil))
            connectedCheck(reason: .remoteAccepted, now: now, into: &actions)
            settledNotice(
                callId: message.callId, peer: sender, endpoint, answeredBy: message.deviceId, after: message, now: now,
                into: &actions)
        case .reject:
            let busy = message.rejectByInternal
            endCall(
                .prepared, busy ? .remoteCallBusy : .remoteRejected,
                event: busy ? .remoteCallBusy : .remoteRejected, endedBy: sender,
                eventReason: message.rejectReason ?? "", info: info, now: now, into: &actions)
            if role == .caller {
                settledNotice(
                    callId: message.callId, peer: sender, endpoint, rejectedBy: message.deviceId, after: message,
                    now: now, into: &actions)
            }
        case .hangup:
            endCall(
                .prepared, .remoteHangup, event: .remoteHangup, endedBy: sender,
                eventReason: message.hangupReason ?? "", info: info, now: now, into: &actions)
        case .videoCall, .audioCall, .keepAlive, .ack:
            break
        }
    }

    private mutating func receiveCall(
        _ message: CallMessage, sender: UInt, info: EventInfo, receivedAt: Int64?, now: Int64,
        into actions: inout [CallAction]
    ) {
        guard message.remoteUserId == userId else {
            return actions.append(
                .log(.warning, "call \(message.callId) is addressed to user \(message.remoteUserId ?? 0), not this one")
            )
        }
        switch phase {
        case .prepared(let endpoint, let preJoined):
            guard !isStale(message, receivedAt: receivedAt, endpoint, now: now, into: &actions) else { return }
            ring(message, sender: sender, info: info, endpoint, leaving: preJoined, now: now, into: &actions)
        case .inCall(let endpoint, let call):
            // A call its caller has given up on is nothing in any state: it must not replace a ringing call as a
            // recall (restarting the ring), end a call in progress as a call again, or get a busy answer.
            guard !isStale(message, receivedAt: receivedAt, endpoint, now: now, into: &actions) else { return }
            guard call.peer == sender else {
                return replyBusy(to: message, sender: sender, endpoint, now: now, into: &actions)
            }
            // The peer user calls from another device than the one this call is with (docs/multi-device.md): a
            // second call, not a recall. It is answered busy; the current call, its ring timer included, stays.
            if let bound = call.peerDevice, let device = message.deviceId, device != bound {
                actions.append(
                    .log(
                        .normal,
                        "call \(message.callId) from device \(device) of user \(sender): this call is with device "
                            + "\(bound)"))
                return replyBusy(to: message, sender: sender, endpoint, now: now, into: &actions)
            }
            if call.stage == .ringing {
                return call.isCaller
                    ? glare(theirs: message, sender: sender, info: info, endpoint, ours: call, now: now, into: &actions)
                    : recall(message, endpoint, replacing: call, now: now, into: &actions)
            }
            // Our call won a glare against this one (a higher callId), and the peer took ours: this is its
            // losing call, overtaken by its accept. Nothing to do.
            if call.isCaller && message.callId > call.id {
                return actions.append(
                    .log(.normal, "call \(message.callId) from user \(sender) lost a glare to \(call.id)"))
            }
            // Otherwise the peer calls again while we are connecting or connected with it: it has left our
            // call, so that call is over; ring the new one.
            endCall(
                .prepared, .remoteHangup, event: .remoteHangup, endedBy: sender, info: info, now: now, into: &actions)
            ring(message, sender: sender, info: info, endpoint, now: now, into: &actions)
        case .uninitialized, .initialized, .failed:
            actions.append(.log(.normal, "call \(message.callId) ignored in \(state)"))
        }
    }

    /// Whether a call message is older than its ring timeout allows (docs/spec/wire-format.md, shortfall 8); if
    /// so, says so in a log action.
    private func isStale(
        _ message: CallMessage, receivedAt: Int64?, _ endpoint: Endpoint, now: Int64, into actions: inout [CallAction]
    ) -> Bool {
        let timeout = endpoint.config.callTimeoutMillisecond
        guard timeout > 0 else { return false }
        // Both times come from outside (a sender's clock, a channel's): saturate rather than trap.
        let age = now.saturatingMinus(receivedAt ?? message.timestamp)
        let allowance =
            receivedAt == nil ? Self.senderClockSkewAllowanceMillis : Self.channelClockSkewAllowanceMillis
        guard age > Int64(clamping: timeout).saturatingPlus(allowance) else { return false }
        actions.append(.log(.warning, "call \(message.callId) ignored: \(age) ms old, past the ring timeout"))
        return true
    }

    /// A new call rings here: report it, start its ring timer and ask the listeners whether to join now.
    private mutating func ring(
        _ message: CallMessage, sender: UInt, info: EventInfo, _ endpoint: Endpoint,
        leaving preJoined: PreJoinedRoom? = nil, now: Int64, into actions: inout [CallAction]
    ) {
        startRinging(message, sender: sender, info: info, endpoint, leaving: preJoined, now: now, into: &actions)
        actions.append(.askCanJoinOnCalling(callId: message.callId, eventInfo: info))
    }

    private mutating func startRinging(
        _ message: CallMessage, sender: UInt, info: EventInfo, _ endpoint: Endpoint,
        leaving preJoined: PreJoinedRoom? = nil, now: Int64, into actions: inout [CallAction]
    ) {
        guard let type = message.action.callType, let room = message.fromRoomId else { return }
        let call = Call(
            id: message.callId, peer: sender, room: room, type: type, role: .callee, startedAt: now,
            peerDevice: message.deviceId,
            callerSendsNotice: message.reliable && message.deviceId != nil,
            // A caller whose call carries the reliability mark keeps alive: the callee watches it from the call
            // on, so that a caller gone before its next message (its cancel lost) does not leave the callee in a
            // call alone (chaos seed 27144083).
            peerKeepsAlive: message.reliable)
        phase = .inCall(endpoint, call)
        actions.append(.stateChanged(.calling, type == .video ? .remoteVideoCall : .remoteAudioCall, info: info))
        actions.append(.notifyEvent(type == .video ? .remoteVideoCall : .remoteAudioCall, reason: nil))
        leaving(preJoined, into: &actions)
        ringTimer(call, endpoint, into: &actions)
    }

    private mutating func replyBusy(
        to message: CallMessage, sender: UInt, _ endpoint: Endpoint, now: Int64, into actions: inout [CallAction]
    ) {
        let reply = self.message(.reject, callId: message.callId, from: endpoint, now: now) {
            $0.rejectByInternal = true
            $0.rejectReason = kRejectReasonCallBusy
        }
        actions.append(.log(.normal, "user \(sender) calls while this user is in a call: replying busy"))
        send(reply, to: sender, now: now, into: &actions)
    }

    /// Both users called each other at once (docs/spec/wire-format.md, shortfall 5). Both sides apply the same
    /// rule: the lower callId wins. The loser drops its own call, takes the winner's and accepts it; the winner
    /// waits for that accept.
    private mutating func glare(
        theirs message: CallMessage, sender: UInt, info: EventInfo, _ endpoint: Endpoint, ours: Call,
        now: Int64, into actions: inout [CallAction]
    ) {
        guard message.callId < ours.id else {
            return actions.append(
                .log(.normal, "glare with user \(sender): our call \(ours.id) wins; waiting for accept"))
        }
        guard message.action.callType != nil, message.fromRoomId != nil else {
            return actions.append(.log(.warning, "call \(message.callId) names no room"))
        }
        actions.append(.log(.normal, "glare with user \(sender): their call \(message.callId) wins"))
        if ours.media.isJoining {
            actions.append(.leaveRTC(remoteUid: ours.peer))
            actions.append(.notifyEvent(.localLeft, reason: nil))
        }
        actions.append(.stopTimer(.ring(callId: ours.id)))
        // Their call rings and is accepted at once, without asking the listeners about joining early.
        startRinging(message, sender: sender, info: info, endpoint, now: now, into: &actions)
        acceptCurrentCall(endpoint, completesRequest: false, now: now, into: &actions)
    }

    /// The caller called again while its earlier call still rings here (its cancel may be lost): take the
    /// new call in place of the old one, without a new notification, as the existing clients do.
    private mutating func recall(
        _ message: CallMessage, _ endpoint: Endpoint, replacing old: Call, now: Int64, into actions: inout [CallAction]
    ) {
        guard let type = message.action.callType, let room = message.fromRoomId else { return }
        let wasJoined = old.media.isJoining
        // Staying in the same channel, the engine reports no new first frame: keep the one already seen.
        let sameMedia = wasJoined && old.room == room && old.type == type
        let media: Call.Media =
            wasJoined && old.room == room
            ? .joined(firstFrame: sameMedia && old.media.firstFrameArrived, peerInRoom: old.media.peerInRoom)
            : .notJoined
        let call = Call(
            id: message.callId, peer: old.peer, room: room, type: type, role: .callee, startedAt: now, media: media,
            peerDevice: message.deviceId,
            callerSendsNotice: message.reliable && message.deviceId != nil,
            // A caller whose call carries the reliability mark keeps alive: the callee watches it from the call
            // on, so that a caller gone before its next message (its cancel lost) does not leave the callee in a
            // call alone (chaos seed 27144083).
            peerKeepsAlive: message.reliable)
        phase = .inCall(endpoint, call)
        actions.append(.log(.normal, "user \(old.peer) called again: call \(message.callId) replaces \(old.id)"))
        if wasJoined && old.room != room { actions.append(.leaveRTC(remoteUid: old.peer)) }
        actions.append(.stopTimer(.ring(callId: old.id)))
        ringTimer(call, endpoint, into: &actions)
        if wasJoined { joinCallRoom(into: &actions) }
    }

    mutating func sendFinished(
        _ message: CallMessage, to peer: UInt, error: SendFailure?, now: Int64, into actions: inout [CallAction]
    ) {
        guard hasEndpoint else { return }
        guard let error else {
            guard message.action.isCall,
                phase.readCall({ _, call in
                    call.id == message.callId && call.isCaller && call.costs[.remoteUserRecvCall] == nil
                }) == true
            else { return }
            phase.changeCall { $1.recordCost(.remoteUserRecvCall, now: now) }
            return actions.append(.notifyEvent(.remoteUserRecvCall, reason: nil))
        }
        if peer == userId { return ownDeviceNoticeFailed(message, error: error, into: &actions) }
        let what = "sending \(message.action) of call \(message.callId) to user \(peer) failed: \(error.message)"
        guard message.action.isCallFlow, !delivery.isRetry(message) else { return actions.append(.log(.normal, what)) }
        actions.append(.log(.error, what))
        actions.append(.notifyError(.sendMessageFail, .message, code: error.code, message: error.message))
    }
}
