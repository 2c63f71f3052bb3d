// What the machine does with the app's requests (call-behaviour.md, "Local actions").
extension CallStateMachine {
    mutating func initialize(userId: UInt, reliability: CallReliability, into actions: inout [CallAction]) {
        guard case .uninitialized = phase else {
            return actions.append(.log(.warning, "initialize ignored: already initialized (state: \(state))"))
        }
        guard userId <= UserID.maximum else {
            return actions.append(
                .log(.error, "initialize ignored: user id \(userId) is larger than the wire's \(UserID.maximum)"))
        }
        phase = .initialized(userId: userId)
        delivery.start(reliability)
        actions.append(.attach)
        actions.append(.log(.normal, "initialized as user \(userId)"))
    }

    mutating func deinitialize(now: Int64, into actions: inout [CallAction]) {
        // The ending message does not complete the request, and is not retried: the completion comes last,
        // after idle is reported, so that no callback follows it (a channel may complete a send synchronously).
        delivery.stop()
        let userId: UInt
        switch phase {
        case .uninitialized:
            return actions.append(.completeRequest(nil))
        case .initialized(let id):
            userId = id
            actions.append(.leaveRTC(remoteUid: nil))
        case .prepared(let endpoint, _), .failed(let endpoint):
            userId = endpoint.userId
            actions.append(.leaveRTC(remoteUid: nil))
        case .inCall(let endpoint, let call):
            userId = endpoint.userId
            leave(endpoint, call, reason: nil, completesRequest: false, now: now, into: &actions)
        }
        phase = .uninitialized
        actions.append(.stateChanged(.idle, .none, info: EventInfo().publishedBy(userId)))
        actions.append(.notifyEvent(.deinitialize, reason: nil))
        actions.append(.completeRequest(nil))
        actions.append(.detach)
    }

    mutating func prepare(_ config: PrepareConfig, into actions: inout [CallAction]) {
        let userId: UInt
        switch phase {
        case .uninitialized:
            return refuse("prepareForCall before initialize", code: .notInitialized, into: &actions)
        case .inCall: return refuse("prepareForCall is not allowed during a call", into: &actions)
        case .initialized(let id): userId = id
        case .prepared(let endpoint, _), .failed(let endpoint): userId = endpoint.userId
        }
        guard config.invalidExtensionKeys.isEmpty else {
            return refuse(
                "userExtension values must be JSON (String, number, Bool, array, dictionary); not: "
                    + config.invalidExtensionKeys.joined(separator: ", "), code: .invalidArgument, into: &actions)
        }
        let firstPrepare = if case .initialized = phase { true } else { false }
        // A new prepare leaves any pre-joined room (the leave below) and forgets it.
        phase = .prepared(Endpoint(userId: userId, config: config), preJoined: nil)
        actions.append(.leaveRTC(remoteUid: nil))
        actions.append(.stateChanged(.prepared, .none))
        actions.append(.completeRequest(nil))
        if firstPrepare { actions.append(.listen) }
    }

    mutating func placeCall(
        to remoteUserId: UInt, type: CallType, extension ext: [String: JSONValue]?, callId: String, now: Int64,
        into actions: inout [CallAction]
    ) {
        let endpoint: Endpoint
        let preJoined: PreJoinedRoom?
        switch phase {
        case .uninitialized: return refuse("call before initialize", code: .notInitialized, into: &actions)
        case .initialized, .inCall, .failed: return refuse("call needs the prepared state", into: &actions)
        case .prepared(let prepared, let room):
            endpoint = prepared
            // A room whose pre-join failed is not used: the call joins its own as usual.
            preJoined = room?.phase == .failed ? nil : room
        }
        guard remoteUserId != endpoint.userId else {
            return refuse("cannot call yourself", code: .invalidArgument, into: &actions)
        }
        guard remoteUserId <= UserID.maximum else {
            return refuse(
                "user id \(remoteUserId) is larger than the wire's \(UserID.maximum)", code: .invalidArgument,
                into: &actions)
        }
        let callId = preJoined?.callId ?? callId
        let room = preJoined?.room ?? roomForNewCall(callId: callId, endpoint: endpoint)
        var message = message(.call(type), callId: callId, from: endpoint, now: now) {
            $0.remoteUserId = remoteUserId
            $0.fromRoomId = room
        }
        if let ext {
            message.fromUserExtension = (message.fromUserExtension ?? [:]).merging(ext) { _, call in call }
        }
        let info = EventInfo(sent: message).publishedBy(endpoint.userId)
        let call = Call(id: callId, peer: remoteUserId, room: room, type: type, role: .caller, startedAt: now)
        phase = .inCall(endpoint, call)
        send(message, to: remoteUserId, completesRequest: true, now: now, into: &actions)
        actions.append(.stateChanged(.calling, type == .video ? .localVideoCall : .localAudioCall, info: info))
        actions.append(.notifyEvent(type == .video ? .localVideoCall : .localAudioCall, reason: nil))
        ringTimer(call, endpoint, into: &actions)
        if let preJoined {
            startCallInPreJoinedRoom(preJoined, now: now, into: &actions)
        } else {
            joinCallRoom(into: &actions)
        }
    }

    mutating func cancel(now: Int64, into actions: inout [CallAction]) {
        guard case .inCall(let endpoint, let call) = phase, call.stage == .ringing, call.role == .caller else {
            return refuse("cancelCall needs a call this user placed that is still ringing", into: &actions)
        }
        leave(endpoint, call, reason: nil, completesRequest: true, now: now, into: &actions)
    }

    mutating func accept(from remoteUserId: UInt, now: Int64, into actions: inout [CallAction]) {
        guard let endpoint, case .inCall(_, let call) = phase, call.stage == .ringing, call.role == .callee else {
            return refuse("accept needs a call ringing for this user", into: &actions)
        }
        guard call.peer == remoteUserId else {
            return refuse(
                "accept: the ringing call is from user \(call.peer), not \(remoteUserId)", code: .invalidArgument,
                into: &actions)
        }
        acceptCurrentCall(endpoint, completesRequest: true, now: now, into: &actions)
    }

    /// The callee accepts the current call, which rings: also used when glare makes this endpoint the callee.
    mutating func acceptCurrentCall(
        _ endpoint: Endpoint, completesRequest: Bool, now: Int64, into actions: inout [CallAction]
    ) {
        guard case .inCall(_, let ringing) = phase else { return }
        let callId = ringing.id
        let peer = ringing.peer
        let message = message(.accept, callId: callId, from: endpoint, now: now)
        let info = EventInfo(sent: message).publishedBy(endpoint.userId)
        send(message, to: peer, completesRequest: completesRequest, now: now, into: &actions)
        let notice = startOwnDeviceNotice(callId: callId, accept: message, endpoint, into: &actions)
        phase.changeCall { _, call in
            call.stage = .connecting
            call.recordCost(.acceptCall, now: now)
            if let notice { call.ownDeviceNotice = notice }
        }
        joinCallRoom(into: &actions)
        actions.append(.stateChanged(.connecting, .localAccepted, info: info))
        actions.append(.notifyEvent(.localAccepted, reason: nil))
        connectedCheck(reason: .localAccepted, now: now, into: &actions)
    }

    mutating func reject(_ remoteUserId: UInt, reason: String?, now: Int64, into actions: inout [CallAction]) {
        guard case .inCall(let endpoint, let call) = phase, call.stage == .ringing, call.role == .callee else {
            return refuse("reject needs a call ringing for this user", into: &actions)
        }
        guard call.peer == remoteUserId else {
            return refuse(
                "reject: the ringing call is from user \(call.peer), not \(remoteUserId)", code: .invalidArgument,
                into: &actions)
        }
        leave(endpoint, call, reason: reason, completesRequest: true, now: now, into: &actions)
    }

    mutating func hangup(_ remoteUserId: UInt, reason: String?, now: Int64, into actions: inout [CallAction]) {
        guard let endpoint, case .inCall(_, let call) = phase else {
            return refuse("hangup needs a call", into: &actions)
        }
        guard call.peer == remoteUserId else {
            return refuse(
                "hangup: the call is with user \(call.peer), not \(remoteUserId)", code: .invalidArgument,
                into: &actions)
        }
        leave(endpoint, call, reason: reason, completesRequest: true, now: now, into: &actions)
    }

    /// This side leaves the call by its user's will: cancel while ringing as caller, reject while ringing as
    /// callee, hangup once connecting; then the end of the call.
    private mutating func leave(
        _ endpoint: Endpoint, _ call: Call, reason: String?, completesRequest: Bool, now: Int64,
        into actions: inout [CallAction]
    ) {
        let message = endingMessage(endpoint, call, reason: reason, now: now)
        let ending: (reason: CallStateReason, event: CallEvent, eventReason: String) =
            switch message.action {
            case .cancelCall: (.localCancelled, .localCancelled, "")
            case .reject: (.localRejected, .localRejected, reason ?? "")
            default: (.localHangup, .localHangup, reason ?? "")
            }
        send(message, to: call.peer, completesRequest: completesRequest, now: now, into: &actions)
        endCall(
            .prepared, ending.reason, event: ending.event, endedBy: endpoint.userId,
            eventReason: ending.eventReason, info: EventInfo(sent: message), now: now, into: &actions)
    }

    mutating func renewToken(_ token: String, into actions: inout [CallAction]) {
        switch phase {
        case .uninitialized, .initialized:
            actions.append(.log(.warning, "renewToken before prepareForCall: nothing to renew"))
        case .prepared(var endpoint, let preJoined):
            endpoint.config.rtcToken = token
            phase = .prepared(endpoint, preJoined: preJoined)
            if preJoined != nil { actions.append(.renewRTCToken(token)) }
        case .failed(var endpoint):
            endpoint.config.rtcToken = token
            phase = .failed(endpoint)
        case .inCall(var endpoint, let call):
            endpoint.config.rtcToken = token
            phase = .inCall(endpoint, call)
            if call.media.isJoining { actions.append(.renewRTCToken(token)) }
        }
    }
}
