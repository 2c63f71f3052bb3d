// Pre-join at prepare (`PrepareConfig.preJoinsCallRoom`): the caller joins the room of the next call it
// will place while it is prepared, so that `call()` finds the room joined and only starts publishing. The
// room is data of the prepared phase: a call takes it over, a ringing call or a new prepare leaves it.

/// The room of the next call this user places, joined (or being joined) ahead of the call.
package struct PreJoinedRoom: Sendable, Equatable {
    package enum Phase: Sendable, Equatable {
        case awaitingToken
        case joining
        case joined
        /// The join failed: the next call joins as usual, and no pre-join is tried again until then.
        case failed
    }

    /// The id the next call will have: the room is named from it.
    package var callId: String
    package var room: String
    package var phase: Phase
}

extension CallStateMachine {
    /// Whether the shell should make a call id and feed ``CallInput/preJoin(callId:)``: prepared, pre-join
    /// enabled, and no room pre-joined (or tried) since the last prepare or call.
    package var wantsPreJoin: Bool {
        guard case .prepared(let endpoint, preJoined: nil) = phase else { return false }
        return endpoint.config.preJoinsCallRoom
    }

    /// The pre-joined room, while prepared with one.
    package var preJoined: PreJoinedRoom? {
        if case .prepared(_, let room) = phase { room } else { nil }
    }

    /// Joins the room of the next call, named from `callId`, publishing nothing yet.
    mutating func preJoin(callId: String, into actions: inout [CallAction]) {
        guard wantsPreJoin, case .prepared(let endpoint, _) = phase else { return }
        let room = roomForNewCall(callId: callId, endpoint: endpoint)
        actions.append(.log(.normal, "pre-joining room \(room) for the next call"))
        if let provider = endpoint.config.rtcTokenProvider {
            phase = .prepared(endpoint, preJoined: PreJoinedRoom(callId: callId, room: room, phase: .awaitingToken))
            actions.append(
                .fetchRTCToken(
                    callId: callId, channel: room, uid: endpoint.userId, provider: TokenProviderRef(provider: provider))
            )
            return
        }
        phase = .prepared(endpoint, preJoined: PreJoinedRoom(callId: callId, room: room, phase: .joining))
        actions.append(preJoinAction(room: room, token: endpoint.config.rtcToken, endpoint))
    }

    private func preJoinAction(room: String, token: String, _ endpoint: Endpoint) -> CallAction {
        .joinRTC(
            RTCJoin(
                channel: room, token: token, uid: endpoint.userId, remoteUid: 0,
                media: .call(.audio).withoutPublishing, localView: nil, remoteView: nil))
    }

    /// The token provider answered for the pre-joined room (no call yet).
    mutating func preJoinTokenFetched(
        _ callId: String, _ outcome: Result<String, CallAPIError>, into actions: inout [CallAction]
    ) {
        guard case .prepared(let endpoint, var room?) = phase, room.callId == callId, room.phase == .awaitingToken
        else { return }
        switch outcome {
        case .success(let token):
            room.phase = .joining
            phase = .prepared(endpoint, preJoined: room)
            actions.append(preJoinAction(room: room.room, token: token, endpoint))
        case .failure(let error):
            room.phase = .failed
            phase = .prepared(endpoint, preJoined: room)
            actions.append(.log(.warning, "pre-join of \(room.room) skipped: no RTC token: \(error.message)"))
        }
    }

    /// An event of the pre-joined room's channel, while no call is in it.
    mutating func preJoinedRoomEvent(_ event: RTCEngineEvent, into actions: inout [CallAction]) {
        guard case .prepared(let endpoint, var room?) = phase, room.phase != .failed else { return }
        switch event {
        case .localJoined:
            room.phase = .joined
            phase = .prepared(endpoint, preJoined: room)
            actions.append(.log(.normal, "pre-joined room \(room.room)"))
        case .joinFailed(_, let code, let message):
            room.phase = .failed
            phase = .prepared(endpoint, preJoined: room)
            actions.append(
                .log(.warning, "pre-join of \(room.room) failed (\(code): \(message)); the next call joins on call"))
            actions.append(.notifyError(.rtcOccurError, .rtc, code: code, message: message))
        case .tokenWillExpire:
            actions.append(.notifyTokenWillExpire)
        default:
            break
        }
    }

    /// The caller's new call takes over `room`: publish as the call needs (the join itself was done at
    /// prepare, or is done when the token comes).
    mutating func startCallInPreJoinedRoom(_ room: PreJoinedRoom, now: Int64, into actions: inout [CallAction]) {
        guard case .inCall(let endpoint, var call) = phase, call.media == .notJoined else { return }
        guard room.phase != .awaitingToken else {
            call.media = .awaitingToken(firstFrame: false)
            phase = .inCall(endpoint, call)
            return actions.append(.notifyEvent(.joinRTCStart, reason: nil))
        }
        call.media = .joined(firstFrame: false, peerInRoom: false)
        if room.phase == .joined { call.recordCost(.localUserJoinChannel, now: now) }
        phase = .inCall(endpoint, call)
        let join = RTCJoin(
            channel: call.room, token: endpoint.config.rtcToken, uid: endpoint.userId, remoteUid: call.peer,
            media: .call(call.type), localView: call.type == .video ? CanvasRef(endpoint.config.localView) : nil,
            remoteView: call.type == .video ? CanvasRef(endpoint.config.remoteView) : nil)
        actions.append(.publishInJoinedRTC(join))
        actions.append(.setRemoteVolume(uid: call.peer, volume: 0))
        actions.append(.notifyEvent(.joinRTCStart, reason: nil))
        if room.phase == .joined {
            actions.append(.notifyEvent(.localJoined, reason: nil))
            actions.append(.notifyEvent(.joinRTCSuccessed, reason: nil))
        }
    }

    /// A call rings for this user: it joins the caller's room, so it leaves the pre-joined one.
    func leaving(_ preJoined: PreJoinedRoom?, into actions: inout [CallAction]) {
        guard let preJoined, preJoined.phase != .failed else { return }
        actions.append(.leaveRTC(remoteUid: nil))
    }
}
