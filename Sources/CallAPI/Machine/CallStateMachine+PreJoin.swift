// Pre-join at prepare (`PrepareConfig.preJoinsCallRoom`): the caller joins the room of the next call it
// will place while it is prepared, so that `call()` finds the room joined and only starts publishing.

/// The room of the next call this user places, joined (or being joined) ahead of the call.
struct PreJoinedRoom: Sendable, Equatable {
    enum Phase: Sendable, Equatable {
        case awaitingToken
        case joining
        case joined
        /// The join failed: the next call joins as usual, and no pre-join is tried again until then.
        case failed
    }

    /// The id the next call will have: the room is named from it.
    var callId: String
    var room: String
    var phase: Phase
}

extension CallStateMachine {
    /// Whether the shell should make a call id and feed ``CallInput/preJoin(callId:)``: prepared, pre-join
    /// enabled, and no room pre-joined (or tried) since the last prepare or call.
    package var wantsPreJoin: Bool {
        state == .prepared && call == nil && preJoined == nil && prepareConfig?.preJoinsCallRoom == true
    }

    /// Joins the room of the next call, named from `callId`, publishing nothing yet.
    mutating func preJoin(callId: String) -> [CallAction] {
        guard wantsPreJoin, let userId, let prepareConfig else { return [] }
        let room = roomForNewCall(callId: callId, userId: userId)
        let log = CallAction.log(.normal, "pre-joining room \(room) for the next call")
        guard prepareConfig.rtcTokenProvider == nil else {
            preJoined = PreJoinedRoom(callId: callId, room: room, phase: .awaitingToken)
            return [log, .fetchRTCToken(callId: callId, channel: room, uid: userId)]
        }
        preJoined = PreJoinedRoom(callId: callId, room: room, phase: .joining)
        return [log, preJoinAction(room: room, token: prepareConfig.rtcToken, userId: userId)]
    }

    private func preJoinAction(room: String, token: String, userId: UInt) -> CallAction {
        .joinRTC(
            RTCJoin(
                channel: room, token: token, uid: userId, remoteUid: 0, media: .call(.audio).withoutPublishing,
                localView: nil, remoteView: nil))
    }

    /// The token provider answered for the pre-joined room (no call yet).
    mutating func preJoinTokenFetched(_ callId: String, _ outcome: Result<String, CallAPIError>) -> [CallAction] {
        guard var room = preJoined, room.callId == callId, room.phase == .awaitingToken, let userId else { return [] }
        switch outcome {
        case .success(let token):
            room.phase = .joining
            preJoined = room
            return [preJoinAction(room: room.room, token: token, userId: userId)]
        case .failure(let error):
            room.phase = .failed
            preJoined = room
            return [.log(.warning, "pre-join of \(room.room) skipped: no RTC token: \(error.message)")]
        }
    }

    /// An event of the pre-joined room's channel, while no call is in it.
    mutating func preJoinedRoomEvent(_ event: RTCEngineEvent) -> [CallAction] {
        guard var room = preJoined, room.phase != .failed else { return [] }
        switch event {
        case .localJoined:
            room.phase = .joined
            preJoined = room
            return [.log(.normal, "pre-joined room \(room.room)")]
        case .joinFailed(_, let code, let message):
            room.phase = .failed
            preJoined = room
            return [
                .log(.warning, "pre-join of \(room.room) failed (\(code): \(message)); the next call joins on call"),
                .notifyError(.rtcOccurError, .rtc, code: code, message: message),
            ]
        case .tokenWillExpire:
            return [.notifyTokenWillExpire]
        default:
            return []
        }
    }

    /// The pre-joined room the call being placed takes over (and forgets it), if one is usable.
    mutating func takePreJoinedRoom() -> PreJoinedRoom? {
        defer { preJoined = nil }
        guard let room = preJoined, room.phase != .failed else { return nil }
        return room
    }

    /// The caller's call takes over `room`: publish as the call needs (the join itself was done at prepare,
    /// or is done when the token comes).
    mutating func startCallInPreJoinedRoom(_ room: PreJoinedRoom) -> [CallAction] {
        guard var call, let userId, let prepareConfig else { return [] }
        call.joinedRTC = true
        call.awaitingToken = room.phase == .awaitingToken
        self.call = call
        guard room.phase != .awaitingToken else { return [.notifyEvent(.joinRTCStart, reason: nil)] }
        let join = RTCJoin(
            channel: call.room, token: prepareConfig.rtcToken, uid: userId, remoteUid: call.peer,
            media: .call(call.type), localView: call.type == .video ? CanvasRef(prepareConfig.localView) : nil,
            remoteView: call.type == .video ? CanvasRef(prepareConfig.remoteView) : nil)
        var actions: [CallAction] = [
            .publishInJoinedRTC(join), .setRemoteVolume(uid: call.peer, volume: 0),
            .notifyEvent(.joinRTCStart, reason: nil),
        ]
        if room.phase == .joined {
            recordCost(CostMap.localUserJoinChannel, now: call.startedAt)
            actions += [.notifyEvent(.localJoined, reason: nil), .notifyEvent(.joinRTCSuccessed, reason: nil)]
        }
        return actions
    }

    /// A call rings for this user: it joins the caller's room, so it leaves the pre-joined one.
    mutating func leavePreJoinedRoom() -> [CallAction] {
        guard let room = preJoined else { return [] }
        preJoined = nil
        return room.phase == .failed ? [] : [.leaveRTC(remoteUid: nil)]
    }
}
