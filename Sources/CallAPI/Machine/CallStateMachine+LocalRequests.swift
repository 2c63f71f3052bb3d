// What the machine does with the app's requests (call-behaviour.md, "Local actions").
extension CallStateMachine {
    mutating func initialize(userId: UInt, reliability: CallReliability) -> [CallAction] {
        guard case .uninitialized = phase else {
            return [.log(.warning, "initialize ignored: already initialized (state: \(state))")]
        }
        guard userId <= UserID.maximum else {
            return [.log(.error, "initialize ignored: user id \(userId) is larger than the wire's \(UserID.maximum)")]
        }
        phase = .initialized(userId: userId)
        delivery.start(reliability)
        return [.attach, .log(.normal, "initialized as user \(userId)")]
    }

    mutating func deinitialize(now: Int64) -> [CallAction] {
        // The ending message does not complete the request, and is not retried: the completion comes last,
        // after idle is reported, so that no callback follows it (a channel may complete a send synchronously).
        delivery.stop()
        var actions: [CallAction]
        let userId: UInt
        switch phase {
        case .uninitialized:
            return [.completeRequest(nil)]
        case .initialized(let id):
            userId = id
            actions = [.leaveRTC(remoteUid: nil)]
        case .prepared(let endpoint, _), .failed(let endpoint):
            userId = endpoint.userId
            actions = [.leaveRTC(remoteUid: nil)]
        case .inCall(let endpoint, let call):
            userId = endpoint.userId
            actions = leave(endpoint, call, reason: nil, completesRequest: false, now: now)
        }
        phase = .uninitialized
        return actions + [
            .stateChanged(.idle, .none, info: [kPublisher: .int(Int(userId))]),
            .notifyEvent(.deinitialize, reason: nil),
            .completeRequest(nil),
            .detach,
        ]
    }

    mutating func prepare(_ config: PrepareConfig) -> [CallAction] {
        let userId: UInt
        switch phase {
        case .uninitialized: return refuse("prepareForCall before initialize", code: .notInitialized)
        case .inCall: return refuse("prepareForCall is not allowed during a call")
        case .initialized(let id): userId = id
        case .prepared(let endpoint, _), .failed(let endpoint): userId = endpoint.userId
        }
        guard config.invalidExtensionKeys.isEmpty else {
            return refuse(
                "userExtension values must be JSON (String, number, Bool, array, dictionary); not: "
                    + config.invalidExtensionKeys.joined(separator: ", "), code: .invalidArgument)
        }
        // A new prepare leaves any pre-joined room (the leave below) and forgets it.
        phase = .prepared(Endpoint(userId: userId, config: config), preJoined: nil)
        return [
            .leaveRTC(remoteUid: nil), .stateChanged(.prepared, .none), .completeRequest(nil),
        ]
    }

    mutating func placeCall(
        to remoteUserId: UInt, type: CallType, extension ext: [String: JSONValue]?, callId: String, now: Int64
    ) -> [CallAction] {
        let endpoint: Endpoint
        let preJoined: PreJoinedRoom?
        switch phase {
        case .uninitialized: return refuse("call before initialize", code: .notInitialized)
        case .initialized, .inCall, .failed: return refuse("call needs the prepared state")
        case .prepared(let prepared, let room):
            endpoint = prepared
            // A room whose pre-join failed is not used: the call joins its own as usual.
            preJoined = room?.phase == .failed ? nil : room
        }
        guard remoteUserId != endpoint.userId else { return refuse("cannot call yourself", code: .invalidArgument) }
        guard remoteUserId <= UserID.maximum else {
            return refuse("user id \(remoteUserId) is larger than the wire's \(UserID.maximum)", code: .invalidArgument)
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
        var info = message.fields
        info[kPublisher] = .int(Int(endpoint.userId))
        let call = Call(id: callId, peer: remoteUserId, room: room, type: type, role: .caller, startedAt: now)
        phase = .inCall(endpoint, call)
        return send(message, to: remoteUserId, completesRequest: true, now: now) + [
            .stateChanged(.calling, type == .video ? .localVideoCall : .localAudioCall, info: info),
            .notifyEvent(type == .video ? .localVideoCall : .localAudioCall, reason: nil),
        ] + ringTimer(call, endpoint) + (preJoined.map { startCallInPreJoinedRoom($0, now: now) } ?? joinCallRoom())
    }

    mutating func cancel(now: Int64) -> [CallAction] {
        guard case .inCall(let endpoint, let call) = phase, call.stage == .ringing, call.role == .caller else {
            return refuse("cancelCall needs a call this user placed that is still ringing")
        }
        return leave(endpoint, call, reason: nil, completesRequest: true, now: now)
    }

    mutating func accept(from remoteUserId: UInt, now: Int64) -> [CallAction] {
        guard case .inCall(let endpoint, let call) = phase, call.stage == .ringing, call.role == .callee else {
            return refuse("accept needs a call ringing for this user")
        }
        guard call.peer == remoteUserId else {
            return refuse(
                "accept: the ringing call is from user \(call.peer), not \(remoteUserId)", code: .invalidArgument)
        }
        return acceptCurrentCall(endpoint, call, completesRequest: true, now: now)
    }

    /// The callee accepts the current call: also used when glare makes this endpoint the callee.
    mutating func acceptCurrentCall(
        _ endpoint: Endpoint, _ ringing: Call, completesRequest: Bool, now: Int64
    ) -> [CallAction] {
        var call = ringing
        call.stage = .connecting
        call.recordCost(CostMap.acceptCall, now: now)
        let message = message(.accept, callId: call.id, from: endpoint, now: now)
        let notice = startOwnDeviceNotice(&call, accept: message, endpoint)
        phase = .inCall(endpoint, call)
        var info = message.fields
        info[kPublisher] = .int(Int(endpoint.userId))
        return send(message, to: call.peer, completesRequest: completesRequest, now: now) + notice + joinCallRoom() + [
            .stateChanged(.connecting, .localAccepted, info: info),
            .notifyEvent(.localAccepted, reason: nil),
        ] + connectedCheck(reason: .localAccepted, now: now)
    }

    mutating func reject(_ remoteUserId: UInt, reason: String?, now: Int64) -> [CallAction] {
        guard case .inCall(let endpoint, let call) = phase, call.stage == .ringing, call.role == .callee else {
            return refuse("reject needs a call ringing for this user")
        }
        guard call.peer == remoteUserId else {
            return refuse(
                "reject: the ringing call is from user \(call.peer), not \(remoteUserId)", code: .invalidArgument)
        }
        return leave(endpoint, call, reason: reason, completesRequest: true, now: now)
    }

    mutating func hangup(_ remoteUserId: UInt, reason: String?, now: Int64) -> [CallAction] {
        guard case .inCall(let endpoint, let call) = phase else { return refuse("hangup needs a call") }
        guard call.peer == remoteUserId else {
            return refuse("hangup: the call is with user \(call.peer), not \(remoteUserId)", code: .invalidArgument)
        }
        return leave(endpoint, call, reason: reason, completesRequest: true, now: now)
    }

    /// This side leaves the call by its user's will: cancel while ringing as caller, reject while ringing as
    /// callee, hangup once connecting; then the end of the call.
    private mutating func leave(
        _ endpoint: Endpoint, _ call: Call, reason: String?, completesRequest: Bool, now: Int64
    ) -> [CallAction] {
        let message = endingMessage(endpoint, call, reason: reason, now: now)
        let ending: (reason: CallStateReason, event: CallEvent, eventReason: String) =
            switch message.action {
            case .cancelCall: (.localCancelled, .localCancelled, "")
            case .reject: (.localRejected, .localRejected, reason ?? "")
            default: (.localHangup, .localHangup, reason ?? "")
            }
        return send(message, to: call.peer, completesRequest: completesRequest, now: now)
            + endCall(
                .prepared, ending.reason, event: ending.event, endedBy: endpoint.userId,
                eventReason: ending.eventReason, info: message.fields, now: now)
    }

    mutating func renewToken(_ token: String) -> [CallAction] {
        switch phase {
        case .uninitialized, .initialized:
            return [.log(.warning, "renewToken before prepareForCall: nothing to renew")]
        case .prepared(var endpoint, let preJoined):
            endpoint.config.rtcToken = token
            phase = .prepared(endpoint, preJoined: preJoined)
            return preJoined == nil ? [] : [.renewRTCToken(token)]
        case .failed(var endpoint):
            endpoint.config.rtcToken = token
            phase = .failed(endpoint)
            return []
        case .inCall(var endpoint, let call):
            endpoint.config.rtcToken = token
            phase = .inCall(endpoint, call)
            return call.media.isJoining ? [.renewRTCToken(token)] : []
        }
    }
}
