// What the machine does with RTC engine events, its timers and the early-join answer
// (call-behaviour.md, "RTC events", "Timer", "The connected check").
extension CallStateMachine {
    mutating func handleRTC(_ event: RTCEngineEvent, now: Int64, into actions: inout [CallAction]) {
        guard hasEndpoint else { return }
        if let room = preJoined?.room, event.channel == room { return preJoinedRoomEvent(event, into: &actions) }
        switch event {
        case .tokenWillExpire(let channel) where call == nil || channel == call?.room:
            return actions.append(.notifyTokenWillExpire)
        case .error(let code, let message):
            return actions.append(.notifyError(.rtcOccurError, .rtc, code: code, message: message))
        default:
            break
        }
        let joining = phase.readCall { _, call in call.media.isJoining ? (call.room, call.peer, call.type) : nil }
        guard let (room, peer, type) = joining ?? nil else { return }
        let fromPeer: (String, UInt) -> Bool = { channel, uid in channel == room && uid == peer }
        switch event {
        case .localJoined(let channel, _) where channel == room:
            phase.changeCall { $1.recordCost(.localUserJoinChannel, now: now) }
            actions.append(.notifyEvent(.localJoined, reason: nil))
            actions.append(.notifyEvent(.joinRTCSuccessed, reason: nil))
        case .joinFailed(let channel, let code, let message) where channel == room:
            joinFailed(code: code, message: message, now: now, into: &actions)
        case .remoteJoined(let channel, let uid) where fromPeer(channel, uid):
            phase.changeCall { _, call in
                call.recordCost(.remoteUserJoinChannel, now: now)
                if case .joined(let firstFrame, _) = call.media {
                    call.media = .joined(firstFrame: firstFrame, peerInRoom: true)
                }
            }
            actions.append(.notifyEvent(.remoteJoined, reason: nil))
            remoteRejoinedChannel(into: &actions)
        case .remoteJoined(let channel, let uid) where channel == room && uid != userId:
            roomInAnotherCall(uid, now: now, into: &actions)
        case .remoteLeft(let channel, let uid, let reason) where fromPeer(channel, uid):
            phase.changeCall { _, call in
                if case .joined(let firstFrame, _) = call.media {
                    call.media = .joined(firstFrame: firstFrame, peerInRoom: false)
                }
            }
            actions.append(.notifyEvent(.remoteLeft, reason: "\(reason)"))
            remoteLeftChannel(quit: reason == 0, into: &actions)
        case .remoteFirstVideoFrameDecoded(let channel, let uid) where fromPeer(channel, uid) && type == .video:
            firstFrameArrived(now: now, into: &actions)
        case .remoteFirstAudioFrameDecoded(let channel, let uid) where fromPeer(channel, uid) && type == .audio:
            firstFrameArrived(now: now, into: &actions)
        case .remoteMediaInterrupted(let channel, let uid) where fromPeer(channel, uid):
            actions.append(.notifyEvent(.mediaReconnecting, reason: nil))
        case .remoteMediaResumed(let channel, let uid, let gapMillis) where fromPeer(channel, uid):
            actions.append(.notifyEvent(.mediaReconnected, reason: "\(gapMillis)"))
        case .localFirstVideoFrameCaptured:
            phase.changeCall { $1.recordCost(.localFirstFrameDidCapture, now: now) }
            actions.append(.notifyEvent(.captureFirstLocalVideoFrame, reason: nil))
        case .localFirstVideoFramePublished(let channel) where channel == room:
            phase.changeCall { $1.recordCost(.localFirstFrameDidPublish, now: now) }
            actions.append(.notifyEvent(.publishFirstLocalVideoFrame, reason: nil))
        case .localFirstAudioFramePublished(let channel) where channel == room:
            if type == .audio { phase.changeCall { $1.recordCost(.localFirstFrameDidPublish, now: now) } }
            actions.append(.notifyEvent(.publishFirstLocalAudioFrame, reason: nil))
        default:
            break
        }
    }

    /// A third user joined the caller's room after the caller (engines report members in the order they joined)
    /// while this callee's call has not connected: the caller has moved on to another call from the same room (the
    /// deployed clients keep one room for every call) and its cancel of ours was lost; they send it once. The call
    /// ends as the caller's cancel before anything of the other call is shown (docs/reliability.md, chaos seed
    /// 26166200). A user already there before the caller came is not: it is the caller's previous callee, which
    /// has not yet noticed that call ended (chaos seeds 35729 and 96033). A connected call is left alone.
    private mutating func roomInAnotherCall(_ uid: UInt, now: Int64, into actions: inout [CallAction]) {
        guard case .inCall(_, let call) = phase, call.role == .callee, call.stage.state != .connected else { return }
        guard call.media.peerInRoom else {
            return actions.append(.log(.normal, "user \(uid) was in room \(call.room) before the caller"))
        }
        let why = "user \(uid) is in the caller's room \(call.room): the caller is in another call"
        actions.append(.log(.warning, "call \(call.id) ends: \(why)"))
        endCall(
            .prepared, .remoteCancelled, event: .remoteCancelled, endedBy: call.peer, eventReason: why, now: now,
            into: &actions)
    }

    /// A first frame before connecting is remembered; in connecting it completes the connection.
    private mutating func firstFrameArrived(now: Int64, into actions: inout [CallAction]) {
        let arrived = phase.changeCall { _, call in
            switch call.media {
            case .notJoined, .awaitingToken(firstFrame: true), .joined(firstFrame: true, _): return false
            case .awaitingToken(firstFrame: false): call.media = .awaitingToken(firstFrame: true)
            case .joined(firstFrame: false, let peerInRoom):
                call.media = .joined(firstFrame: true, peerInRoom: peerInRoom)
            }
            call.recordCost(.recvFirstFrame, now: now)
            return true
        }
        guard arrived == true else { return }
        actions.append(.notifyEvent(.recvRemoteFirstFrame, reason: nil))
        connectedCheck(reason: .recvRemoteFirstFrame, now: now, into: &actions)
    }

    /// The media channel cannot be joined, so the call cannot work: tell the peer (so it does not ring or
    /// wait on), leave, and go `failed(joinRTCFailed)`.
    mutating func joinFailed(code: Int, message text: String, now: Int64, into actions: inout [CallAction]) {
        guard case .inCall(let endpoint, let call) = phase else { return }
        let ending = endingMessage(endpoint, call, reason: "joinRTCFailed", now: now)
        actions.append(.notifyError(.rtcOccurError, .rtc, code: code, message: text))
        send(ending, to: call.peer, now: now, into: &actions)
        endCall(
            .failed, .joinRTCFailed, event: nil, endedBy: endpoint.userId, eventReason: text, now: now, into: &actions)
    }

    mutating func timerFired(_ timer: CallTimerID, now: Int64, into actions: inout [CallAction]) {
        switch timer {
        case .ring(let callId): ringTimerFired(callId, now: now, into: &actions)
        case .retry(let id): retryDue(id, now: now, into: &actions)
        case .keepAlive(let callId): keepAliveDue(callId, now: now, into: &actions)
        case .peerSilence(let callId): peerSilenceCheck(callId, now: now, into: &actions)
        case .remoteLeftGrace(let callId), .remoteQuitGrace(let callId):
            remoteLeftGraceOver(timer, callId, now: now, into: &actions)
        case .ownDeviceNotice(let callId): repeatOwnDeviceNotice(callId, now: now, into: &actions)
        }
    }

    /// Nobody accepted, or the connection did not complete, in `callTimeoutMillisecond`: cancel (flagged as a
    /// timeout) and end the call.
    private mutating func ringTimerFired(_ callId: String, now: Int64, into actions: inout [CallAction]) {
        guard case .inCall(let endpoint, let call) = phase, call.id == callId,
            call.stage == .ringing || call.stage == .connecting
        else { return }
        let message = message(.cancelCall, callId: callId, from: endpoint, now: now) { $0.cancelCallByInternal = true }
        send(message, to: call.peer, now: now, into: &actions)
        endCall(
            .prepared, .callingTimeout, event: .callingTimeout, endedBy: endpoint.userId,
            info: EventInfo(sent: message),
            now: now, into: &actions)
    }

    mutating func earlyJoinDecided(_ callId: String, allowed: Bool, into actions: inout [CallAction]) {
        guard case .inCall(_, let call) = phase, call.id == callId, call.stage == .ringing, call.media == .notJoined
        else { return }
        guard allowed else { return actions.append(.log(.normal, "canJoinRtcOnCalling is false: joining on accept")) }
        joinCallRoom(into: &actions)
    }
}
