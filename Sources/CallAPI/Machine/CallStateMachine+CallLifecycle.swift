// The steps every call goes through, shared by the input handlers: its ring timer, joining its room, the
// connected check, and its end.
extension CallStateMachine {
    /// The ring timer of a new call, unless `callTimeoutMillisecond` is 0.
    func ringTimer(_ call: Call, _ endpoint: Endpoint, into actions: inout [CallAction]) {
        let timeout = endpoint.config.callTimeoutMillisecond
        guard timeout > 0 else { return }
        actions.append(.startTimer(.ring(callId: call.id), millis: Int64(clamping: timeout)))
    }

    /// The room of a call this user places: the prepared room, or a fresh one named from the user and call
    /// ids (channel names allow `A-Z a-z 0-9 . _ -`, at most 64 characters).
    func roomForNewCall(callId: String, endpoint: Endpoint) -> String {
        if !endpoint.config.roomId.isEmpty { return endpoint.config.roomId }
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
        return String("\(endpoint.userId)-\(callId.filter(allowed.contains))".prefix(64))
    }

    /// Joins the current call's room, publishing and subscribing as the call type needs, remote audio muted;
    /// with a token provider, asks it for the room's token first.
    mutating func joinCallRoom(into actions: inout [CallAction]) {
        let media = phase.readCall { endpoint, call -> Call.Media? in
            guard call.media == .notJoined else { return nil }
            if let provider = endpoint.config.rtcTokenProvider {
                actions.append(
                    .fetchRTCToken(
                        callId: call.id, channel: call.room, uid: endpoint.userId,
                        provider: TokenProviderRef(provider: provider)))
                actions.append(.notifyEvent(.joinRTCStart, reason: nil))
                return .awaitingToken(firstFrame: false)
            }
            Self.join(call, endpoint, token: endpoint.config.rtcToken, into: &actions)
            actions.append(.notifyEvent(.joinRTCStart, reason: nil))
            return .joined(firstFrame: false, peerInRoom: false)
        }
        guard let media = media ?? nil else { return }
        phase.changeCall { $1.media = media }
    }

    private static func join(_ call: Call, _ endpoint: Endpoint, token: String, into actions: inout [CallAction]) {
        let join = RTCJoin(
            channel: call.room, token: token, uid: endpoint.userId, remoteUid: call.peer, media: .call(call.type),
            localView: call.type == .video ? CanvasRef(endpoint.config.localView) : nil,
            remoteView: call.type == .video ? CanvasRef(endpoint.config.remoteView) : nil)
        actions.append(.joinRTC(join))
        actions.append(.setRemoteVolume(uid: call.peer, volume: 0))
    }

    /// The provider answered: join with the token, or fail the call as a join failure would.
    mutating func rtcTokenFetched(
        _ callId: String, _ outcome: Result<String, CallAPIError>, now: Int64, into actions: inout [CallAction]
    ) {
        if case .prepared = phase { return preJoinTokenFetched(callId, outcome, into: &actions) }
        guard case .inCall(let endpoint, var call) = phase, call.id == callId,
            case .awaitingToken(let firstFrame) = call.media
        else { return }
        call.media = .joined(firstFrame: firstFrame, peerInRoom: false)
        phase = .inCall(endpoint, call)
        switch outcome {
        case .success(let token):
            Self.join(call, endpoint, token: token, into: &actions)
        case .failure(let error):
            joinFailed(code: error.code.rawValue, message: "no RTC token: \(error.message)", now: now, into: &actions)
        }
    }

    /// In connecting: go connected once first-frame waiting is off or the remote first frame is in.
    mutating func connectedCheck(reason: CallStateReason, now: Int64, into actions: inout [CallAction]) {
        let connects = phase.readCall { endpoint, call in
            guard call.stage == .connecting else { return false }
            let waiting = !endpoint.config.firstFrameWaittingDisabled
            guard !waiting || call.media.firstFrameArrived else { return false }
            let userId = endpoint.userId
            let info = EventInfo(connected: call, user: userId).publishedBy(
                reason == .localAccepted ? userId : call.peer)
            actions.append(.stopTimer(.ring(callId: call.id)))
            actions.append(.setRemoteVolume(uid: call.peer, volume: 100))
            actions.append(.stateChanged(.connected, reason, info: info))
            actions.append(
                .notifyConnected(roomId: call.room, callerId: call.isCaller ? userId : call.peer, selfId: userId))
            return true
        }
        guard connects == true else { return }
        phase.changeCall { $1.stage = .connected(since: now) }
    }

    /// The message that ends `call` on the peer's side when this side leaves it: cancel from a ringing
    /// caller, reject from a ringing callee, hangup once connecting.
    mutating func endingMessage(_ endpoint: Endpoint, _ call: Call, reason: String?, now: Int64) -> CallMessage {
        switch (call.stage, call.role) {
        case (.ringing, .caller):
            message(.cancelCall, callId: call.id, from: endpoint, now: now)
        case (.ringing, .callee):
            message(.reject, callId: call.id, from: endpoint, now: now) { $0.rejectReason = reason }
        case (.connecting, _), (.connected, _):
            message(.hangup, callId: call.id, from: endpoint, now: now) { $0.hangupReason = reason }
        }
    }

    /// Every way out of a call: stop its timers, leave RTC, report the new state (`prepared`, or `failed`)
    /// and event, and `onCallDisconnected` when the call had connected.
    mutating func endCall(
        _ newState: CallStateType, _ reason: CallStateReason, event: CallEvent?, endedBy: UInt,
        eventReason: String = "", info: EventInfo = EventInfo(), now: Int64,
        into actions: inout [CallAction]
    ) {
        guard case .inCall(let endpoint, let ending) = phase else { return }
        phase = newState == .failed ? .failed(endpoint) : .prepared(endpoint, preJoined: nil)
        let info = info.publishedBy(endedBy)
        actions.append(.stopTimer(.ring(callId: ending.id)))
        ending.armed.appendStops(of: ending.id, to: &actions)
        if ending.hasOwnDeviceNotice { actions.append(.stopTimer(.ownDeviceNotice(callId: ending.id))) }
        actions.append(.leaveRTC(remoteUid: ending.peer))
        if ending.media.isJoining { actions.append(.notifyEvent(.localLeft, reason: nil)) }
        actions.append(.stateChanged(newState, reason, eventReason: eventReason, info: info))
        if let event { actions.append(.notifyEvent(event, reason: eventReason.isEmpty ? nil : eventReason)) }
        if case .connected(let since) = ending.stage {
            actions.append(
                .notifyDisconnected(
                    roomId: ending.room, hangupUserId: endedBy, selfId: endpoint.userId,
                    durationMillis: max(0, now - since)))
        }
    }
}
