// What the machine does with messages from the signaling channel (call-behaviour.md, "Received messages").
extension CallStateMachine {
    mutating func receive(_ text: String, sender vouched: SignalSender?, now: Int64) -> [CallAction] {
        guard let userId, state != .idle else { return [.log(.normal, "message ignored: not initialized")] }
        let message: CallMessage
        let fields: [String: JSONValue]
        do {
            (message, fields) = try CallMessage.decode(text)
        } catch {
            return [.log(.normal, "message dropped: \(error)")]
        }
        var actions: [CallAction] = []
        // The channel's word on who sent it wins over the body's (shortfall 4).
        var sender = message.fromUserId
        if let vouched {
            guard let id = UInt(vouched.userId) else {
                return [
                    .log(.warning, "message dropped: the channel's sender id \"\(vouched.userId)\" is not a user id")
                ]
            }
            if id != message.fromUserId {
                actions.append(
                    .log(.warning, "message from user \(id) claims fromUserId \(message.fromUserId); using \(id)"))
            }
            sender = id
        }
        guard sender != userId else { return actions + receiveFromOwnDevice(message, now: now) }
        if let ignored = receiveFromOtherDevice(message, sender: sender, now: now) { return actions + ignored }
        noteReceived(message, from: sender, now: now)
        if message.action == .ack { return actions + receiveAck(message, from: sender, now: now) }
        // Handling a message twice equals handling it once (shortfall 2); the sender still gets its ack.
        guard !isRepeat(message, sender: sender) else {
            return actions + [.log(.normal, "repeated message \(message.messageId) of call \(message.callId) ignored")]
                + acknowledgement(of: message, from: sender, now: now)
        }
        actions += handle(message, sender: sender, fields: fields, receivedAt: vouched?.receivedAtMillis, now: now)
        return actions + acknowledgement(of: message, from: sender, now: now)
    }

    private mutating func handle(
        _ message: CallMessage, sender: UInt, fields: [String: JSONValue], receivedAt: Int64?, now: Int64
    ) -> [CallAction] {
        var actions: [CallAction] = []
        var info = fields
        info[kFromUserId] = .int(Int(sender))
        info[kPublisher] = .int(Int(sender))

        if message.action.isCall {
            return actions
                + receiveCall(message, sender: sender, info: info, receivedAt: receivedAt, now: now)
        }
        // Anything but a call acts only on the call whose callId it carries, from that call's peer (shortfall 1).
        guard let call, call.callId == message.callId, call.peer == sender else {
            return actions + [
                .log(.normal, "\(message.action) for call \(message.callId) ignored: not the current call")
            ]
        }
        if let settled = settledByCaller(message, info: info, now: now) { return actions + settled }
        switch message.action {
        case .cancelCall:
            let timedOut = message.cancelCallByInternal
            return actions
                + endCall(
                    .prepared, timedOut ? .remoteCallingTimeout : .remoteCancelled,
                    event: timedOut ? .remoteCallingTimeout : .remoteCancelled, endedBy: sender, info: info, now: now)
        case .accept:
            guard state == .calling, call.isCaller else {
                return actions + [.log(.normal, "accept ignored in \(state)")]
            }
            updateCall {
                $0.remoteAccepted = true
                $0.peerDevice = message.deviceId
            }
            recordCost(CostMap.acceptCall, now: now)
            actions.append(setState(.connecting, .remoteAccepted, info: info))
            actions.append(.notifyEvent(.remoteAccepted, reason: nil))
            return actions + connectedCheck(reason: .remoteAccepted, now: now)
                + settledNotice(call, answeredBy: message.deviceId, now: now)
        case .reject:
            let busy = message.rejectByInternal
            return actions
                + endCall(
                    .prepared, busy ? .remoteCallBusy : .remoteRejected,
                    event: busy ? .remoteCallBusy : .remoteRejected, endedBy: sender,
                    eventReason: message.rejectReason ?? "", info: info, now: now)
                + (call.isCaller ? settledNotice(call, rejectedBy: message.deviceId, now: now) : [])
        case .hangup:
            return actions
                + endCall(
                    .prepared, .remoteHangup, event: .remoteHangup, endedBy: sender,
                    eventReason: message.hangupReason ?? "", info: info, now: now)
        case .videoCall, .audioCall, .keepAlive, .ack:
            return actions
        }
    }

    private mutating func receiveCall(
        _ message: CallMessage, sender: UInt, info: [String: JSONValue], receivedAt: Int64?, now: Int64
    ) -> [CallAction] {
        guard message.remoteUserId == userId else {
            return [
                .log(.warning, "call \(message.callId) is addressed to user \(message.remoteUserId ?? 0), not this one")
            ]
        }
        switch state {
        case .prepared:
            if let age = staleness(of: message, receivedAt: receivedAt, now: now) {
                return [.log(.warning, "call \(message.callId) ignored: \(age) ms old, past the ring timeout")]
            }
            return ring(message, sender: sender, info: info, now: now)
        case .calling, .connecting, .connected:
            guard let call else { return [] }
            guard call.peer == sender else { return replyBusy(to: message, sender: sender, now: now) }
            if state == .calling && call.isCaller {
                return glare(theirs: message, sender: sender, info: info, now: now)
            }
            if state == .calling {
                return recall(message, now: now)
            }
            // Our call won a glare against this one (a higher callId), and the peer took ours: this is its
            // losing call, overtaken by its accept. Nothing to do.
            if call.isCaller && message.callId > call.callId {
                return [.log(.normal, "call \(message.callId) from user \(sender) lost a glare to \(call.callId)")]
            }
            // Otherwise the peer calls again while we are connecting or connected with it: it has left our
            // call, so that call is over; ring the new one.
            let ended = endCall(.prepared, .remoteHangup, event: .remoteHangup, endedBy: sender, info: info, now: now)
            return ended + ring(message, sender: sender, info: info, now: now)
        case .idle, .failed:
            return [.log(.normal, "call \(message.callId) ignored in \(state)")]
        }
    }

    /// The age in milliseconds when the message is older than the ring timeout allows (shortfall 8), else nil.
    private func staleness(of message: CallMessage, receivedAt: Int64?, now: Int64) -> Int64? {
        guard let timeout = prepareConfig?.callTimeoutMillisecond, timeout > 0 else { return nil }
        let age = receivedAt.map { now - $0 } ?? (now - message.timestamp)
        let allowance =
            receivedAt == nil ? Self.senderClockSkewAllowanceMillis : Self.channelClockSkewAllowanceMillis
        return age > Int64(clamping: timeout) + allowance ? age : nil
    }

    private mutating func ring(
        _ message: CallMessage, sender: UInt, info: [String: JSONValue], now: Int64
    ) -> [CallAction] {
        guard let type = message.action.callType, let room = message.fromRoomId else { return [] }
        var actions = startCall(
            CurrentCall(
                callId: message.callId, peer: sender, room: room, type: type, isCaller: false, localAccepted: false,
                remoteAccepted: true, startedAt: now, peerDevice: message.deviceId))
        actions.insert(setState(.calling, type == .video ? .remoteVideoCall : .remoteAudioCall, info: info), at: 0)
        actions.insert(.notifyEvent(type == .video ? .remoteVideoCall : .remoteAudioCall, reason: nil), at: 1)
        actions.append(.askCanJoinOnCalling(callId: message.callId, eventInfo: info))
        return actions
    }

    private mutating func replyBusy(to message: CallMessage, sender: UInt, now: Int64) -> [CallAction] {
        let reply = self.message(.reject, callId: message.callId, now: now) {
            $0.rejectByInternal = true
            $0.rejectReason = kRejectReasonCallBusy
        }
        return [
            .log(.normal, "user \(sender) calls while this user is in a call: replying busy"),
            .send(reply, to: sender, completesRequest: false),
        ]
    }

    /// Both users called each other at once (shortfall 5). Both sides apply the same rule: the lower callId
    /// wins. The loser drops its own call, takes the winner's and accepts it; the winner waits for that accept.
    private mutating func glare(
        theirs message: CallMessage, sender: UInt, info: [String: JSONValue], now: Int64
    ) -> [CallAction] {
        guard let ours = call else { return [] }
        guard message.callId < ours.callId else {
            return [.log(.normal, "glare with user \(sender): our call \(ours.callId) wins; waiting for accept")]
        }
        var actions: [CallAction] = [.log(.normal, "glare with user \(sender): their call \(message.callId) wins")]
        if ours.joinedRTC { actions += [.leaveRTC(remoteUid: ours.peer), .notifyEvent(.localLeft, reason: nil)] }
        call = nil
        actions += [.stopRingTimer] + ring(message, sender: sender, info: info, now: now)
        actions.removeAll { if case .askCanJoinOnCalling = $0 { true } else { false } }
        return actions + acceptCurrentCall(now: now, completesRequest: false)
    }

    /// The caller called again while its earlier call still rings here (its cancel may be lost): take the
    /// new call in place of the old one, without a new notification, as the existing clients do.
    private mutating func recall(_ message: CallMessage, now: Int64) -> [CallAction] {
        guard let old = call, let type = message.action.callType, let room = message.fromRoomId else { return [] }
        var actions: [CallAction] = [
            .log(.normal, "user \(old.peer) called again: call \(message.callId) replaces \(old.callId)")
        ]
        let wasJoined = old.joinedRTC
        if wasJoined && old.room != room { actions.append(.leaveRTC(remoteUid: old.peer)) }
        actions += [.stopRingTimer]
        // Staying in the same channel, the engine reports no new first frame: keep the one already seen.
        let sameMedia = wasJoined && old.room == room && old.type == type
        actions += startCall(
            CurrentCall(
                callId: message.callId, peer: old.peer, room: room, type: type, isCaller: false, localAccepted: false,
                remoteAccepted: true, firstFrameArrived: sameMedia && old.firstFrameArrived,
                joinedRTC: wasJoined && old.room == room, startedAt: now, peerDevice: message.deviceId))
        if wasJoined { actions += joinCallRoom() }
        return actions
    }

    mutating func sendFinished(_ message: CallMessage, to peer: UInt, error: SendFailure?, now: Int64) -> [CallAction] {
        guard state != .idle else { return [] }
        guard let error else {
            if message.action.isCall, let call, call.callId == message.callId, call.isCaller,
                call.costs.stages[CostMap.remoteUserRecvCall] == nil
            {
                recordCost(CostMap.remoteUserRecvCall, now: now)
                return [.notifyEvent(.remoteUserRecvCall, reason: nil)]
            }
            return []
        }
        let what = "sending \(message.action) of call \(message.callId) to user \(peer) failed: \(error.message)"
        guard message.action.isCallFlow, !isRetry(message) else { return [.log(.normal, what)] }
        return [
            .log(.error, what),
            .notifyError(.sendMessageFail, .message, code: error.code, message: error.message),
        ]
    }
}
