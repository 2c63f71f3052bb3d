// What the machine does with RTC engine events, the ring timer and the early-join answer
// (call-behaviour.md, "RTC events", "Timer", "The connected check").
extension CallStateMachine {
    mutating func handleRTC(_ event: RTCEngineEvent, now: Int64) -> [CallAction] {
        guard state != .idle else { return [] }
        if call == nil, let room = preJoined?.room, event.channel == room { return preJoinedRoomEvent(event) }
        switch event {
        case .tokenWillExpire(let channel) where call == nil || channel == call?.room:
            return [.notifyTokenWillExpire]
        case .error(let code, let message):
            return [.notifyError(.rtcOccurError, .rtc, code: code, message: message)]
        default:
            break
        }
        guard let call, call.joinedRTC else { return [] }
        switch event {
        case .localJoined(let channel, _) where channel == call.room:
            recordCost(CostMap.localUserJoinChannel, now: now)
            return [.notifyEvent(.localJoined, reason: nil), .notifyEvent(.joinRTCSuccessed, reason: nil)]
        case .joinFailed(let channel, let code, let message) where channel == call.room:
            return joinFailed(code: code, message: message, now: now)
        case .remoteJoined(let channel, let uid) where channel == call.room && uid == call.peer:
            recordCost(CostMap.remoteUserJoinChannel, now: now)
            return [.notifyEvent(.remoteJoined, reason: nil)] + remoteRejoinedChannel()
        case .remoteLeft(let channel, let uid, let reason) where channel == call.room && uid == call.peer:
            return [.notifyEvent(.remoteLeft, reason: "\(reason)")] + remoteLeftChannel(now: now)
        case .remoteFirstVideoFrameDecoded(let channel, let uid)
        where channel == call.room && uid == call.peer && call.type == .video:
            return firstFrameArrived(now: now)
        case .remoteFirstAudioFrameDecoded(let channel, let uid)
        where channel == call.room && uid == call.peer && call.type == .audio:
            return firstFrameArrived(now: now)
        case .localFirstVideoFrameCaptured:
            recordCost(CostMap.localFirstFrameDidCapture, now: now)
            return [.notifyEvent(.captureFirstLocalVideoFrame, reason: nil)]
        case .localFirstVideoFramePublished(let channel) where channel == call.room:
            recordCost(CostMap.localFirstFrameDidPublish, now: now)
            return [.notifyEvent(.publishFirstLocalVideoFrame, reason: nil)]
        case .localFirstAudioFramePublished(let channel) where channel == call.room:
            if call.type == .audio { recordCost(CostMap.localFirstFrameDidPublish, now: now) }
            return [.notifyEvent(.publishFirstLocalAudioFrame, reason: nil)]
        default:
            return []
        }
    }

    /// A first frame before connecting is remembered; in connecting it completes the connection.
    private mutating func firstFrameArrived(now: Int64) -> [CallAction] {
        guard call?.firstFrameArrived == false else { return [] }
        updateCall { $0.firstFrameArrived = true }
        recordCost(CostMap.recvFirstFrame, now: now)
        return [.notifyEvent(.recvRemoteFirstFrame, reason: nil)]
            + connectedCheck(reason: .recvRemoteFirstFrame, now: now)
    }

    /// The media channel cannot be joined, so the call cannot work: tell the peer (so it does not ring or
    /// wait on), leave, and go `failed(joinRTCFailed)`.
    mutating func joinFailed(code: Int, message text: String, now: Int64) -> [CallAction] {
        guard let call, let userId else { return [] }
        return [
            .notifyError(.rtcOccurError, .rtc, code: code, message: text),
            .send(endingMessage(reason: "joinRTCFailed", now: now), to: call.peer, completesRequest: false),
        ] + endCall(.failed, .joinRTCFailed, event: nil, endedBy: userId, eventReason: text, now: now)
    }

    mutating func ringTimerFired(_ callId: String, now: Int64) -> [CallAction] {
        guard let call, call.callId == callId, state == .calling || state == .connecting, let userId else {
            return []
        }
        let message = message(.cancelCall, callId: callId, now: now) { $0.cancelCallByInternal = true }
        return [.send(message, to: call.peer, completesRequest: false)]
            + endCall(
                .prepared, .callingTimeout, event: .callingTimeout, endedBy: userId, info: message.fields, now: now)
    }

    mutating func earlyJoinDecided(_ callId: String, allowed: Bool) -> [CallAction] {
        guard let call, call.callId == callId, state == .calling, !call.joinedRTC else { return [] }
        guard allowed else { return [.log(.normal, "canJoinRtcOnCalling is false: joining on accept")] }
        return joinCallRoom()
    }
}
