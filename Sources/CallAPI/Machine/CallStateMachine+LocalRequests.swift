// What the machine does with the app's requests (call-behaviour.md, "Local actions").
extension CallStateMachine {
    mutating func initialize(userId: UInt, reliability: CallReliability) -> [CallAction] {
        guard state == .idle, self.userId == nil else {
            return [.log(.warning, "initialize ignored: already initialized (state: \(state))")]
        }
        guard userId <= UserID.maximum else {
            return [.log(.error, "initialize ignored: user id \(userId) is larger than the wire's \(UserID.maximum)")]
        }
        setInitialized(userId, reliability: reliability)
        return [.log(.normal, "initialized as user \(userId)")]
    }

    mutating func deinitialize(now: Int64) -> [CallAction] {
        guard let userId else { return [.completeRequest(nil)] }
        var actions: [CallAction] = []
        // The ending message does not complete the request: the completion comes last, after idle is
        // reported, so that no callback follows it (a channel may complete a send synchronously).
        if let call {
            switch state {
            case .calling where call.isCaller:
                actions += cancel(now: now, completesRequest: false)
            case .calling:
                actions += reject(call.peer, reason: nil, now: now, completesRequest: false)
            default:
                actions += hangup(call.peer, reason: nil, now: now, completesRequest: false)
            }
        } else {
            actions.append(.leaveRTC(remoteUid: nil))
        }
        setInitialized(nil)
        actions.append(setState(.idle, .none, info: [kPublisher: .int(Int(userId))]))
        actions.append(.notifyEvent(.deinitialize, reason: nil))
        actions.append(.completeRequest(nil))
        return actions
    }

    mutating func prepare(_ config: PrepareConfig) -> [CallAction] {
        guard userId != nil else { return refuse("prepareForCall before initialize", code: .notInitialized) }
        guard !state.isInCall else { return refuse("prepareForCall is not allowed during a call") }
        guard config.invalidExtensionKeys.isEmpty else {
            return refuse(
                "userExtension values must be JSON (String, number, Bool, array, dictionary); not: "
                    + config.invalidExtensionKeys.joined(separator: ", "), code: .invalidArgument)
        }
        setPrepareConfig(config)
        preJoined = nil
        return [.leaveRTC(remoteUid: nil), setState(.prepared, .none), .completeRequest(nil)]
    }

    mutating func placeCall(
        to remoteUserId: UInt, type: CallType, extension ext: [String: JSONValue]?, callId: String, now: Int64
    ) -> [CallAction] {
        guard let userId else { return refuse("call before initialize", code: .notInitialized) }
        guard state == .prepared, prepareConfig != nil else { return refuse("call needs the prepared state") }
        guard remoteUserId != userId else { return refuse("cannot call yourself", code: .invalidArgument) }
        guard remoteUserId <= UserID.maximum else {
            return refuse("user id \(remoteUserId) is larger than the wire's \(UserID.maximum)", code: .invalidArgument)
        }
        let preJoinedRoom = takePreJoinedRoom()
        let callId = preJoinedRoom?.callId ?? callId
        let room = preJoinedRoom?.room ?? roomForNewCall(callId: callId, userId: userId)
        var message = message(.call(type), callId: callId, now: now) {
            $0.remoteUserId = remoteUserId
            $0.fromRoomId = room
        }
        if let ext {
            message.fromUserExtension = (message.fromUserExtension ?? [:]).merging(ext) { _, call in call }
        }
        var actions: [CallAction] = [.send(message, to: remoteUserId, completesRequest: true)]
        actions += startCall(
            CurrentCall(
                callId: callId, peer: remoteUserId, room: room, type: type, isCaller: true,
                localAccepted: true, remoteAccepted: false, startedAt: now))
        var info = message.fields
        info[kPublisher] = .int(Int(userId))
        let reason: CallStateReason = type == .video ? .localVideoCall : .localAudioCall
        actions.insert(setState(.calling, reason, info: info), at: 1)
        actions.insert(.notifyEvent(type == .video ? .localVideoCall : .localAudioCall, reason: nil), at: 2)
        actions += preJoinedRoom.map { startCallInPreJoinedRoom($0) } ?? joinCallRoom()
        return actions
    }

    mutating func cancel(now: Int64, completesRequest: Bool = true) -> [CallAction] {
        guard let call, state == .calling, call.isCaller, let userId else {
            return refuse("cancelCall needs a call this user placed that is still ringing")
        }
        let message = message(.cancelCall, callId: call.callId, now: now)
        return [.send(message, to: call.peer, completesRequest: completesRequest)]
            + endCall(
                .prepared, .localCancelled, event: .localCancelled, endedBy: userId, info: message.fields, now: now)
    }

    mutating func accept(from remoteUserId: UInt, now: Int64) -> [CallAction] {
        guard let call, state == .calling, !call.isCaller, !call.localAccepted else {
            return refuse("accept needs a call ringing for this user")
        }
        guard call.peer == remoteUserId else {
            return refuse(
                "accept: the ringing call is from user \(call.peer), not \(remoteUserId)", code: .invalidArgument)
        }
        return acceptCurrentCall(now: now, completesRequest: true)
    }

    /// The callee accepts the current call: also used when glare makes this endpoint the callee.
    mutating func acceptCurrentCall(now: Int64, completesRequest: Bool) -> [CallAction] {
        guard let call, let userId else { return [] }
        updateCall { $0.localAccepted = true }
        recordCost(CostMap.acceptCall, now: now)
        let message = message(.accept, callId: call.callId, now: now)
        var actions: [CallAction] = [.send(message, to: call.peer, completesRequest: completesRequest)]
        actions += joinCallRoom()
        var info = message.fields
        info[kPublisher] = .int(Int(userId))
        actions.append(setState(.connecting, .localAccepted, info: info))
        actions.append(.notifyEvent(.localAccepted, reason: nil))
        return actions + connectedCheck(reason: .localAccepted, now: now)
    }

    mutating func reject(
        _ remoteUserId: UInt, reason: String?, now: Int64, completesRequest: Bool = true
    ) -> [CallAction] {
        guard let call, state == .calling, !call.isCaller, let userId else {
            return refuse("reject needs a call ringing for this user")
        }
        guard call.peer == remoteUserId else {
            return refuse(
                "reject: the ringing call is from user \(call.peer), not \(remoteUserId)", code: .invalidArgument)
        }
        let message = message(.reject, callId: call.callId, now: now) { $0.rejectReason = reason }
        return [.send(message, to: call.peer, completesRequest: completesRequest)]
            + endCall(
                .prepared, .localRejected, event: .localRejected, endedBy: userId, eventReason: reason ?? "",
                info: message.fields, now: now)
    }

    mutating func hangup(
        _ remoteUserId: UInt, reason: String?, now: Int64, completesRequest: Bool = true
    ) -> [CallAction] {
        guard let call, state.isInCall, let userId else { return refuse("hangup needs a call") }
        guard call.peer == remoteUserId else {
            return refuse("hangup: the call is with user \(call.peer), not \(remoteUserId)", code: .invalidArgument)
        }
        if state == .calling {
            return call.isCaller
                ? cancel(now: now, completesRequest: completesRequest)
                : reject(remoteUserId, reason: reason, now: now, completesRequest: completesRequest)
        }
        let message = message(.hangup, callId: call.callId, now: now) { $0.hangupReason = reason }
        return [.send(message, to: call.peer, completesRequest: completesRequest)]
            + endCall(
                .prepared, .localHangup, event: .localHangup, endedBy: userId, eventReason: reason ?? "",
                info: message.fields, now: now)
    }

    mutating func renewToken(_ token: String) -> [CallAction] {
        guard var config = prepareConfig else {
            return [.log(.warning, "renewToken before prepareForCall: nothing to renew")]
        }
        config.rtcToken = token
        setPrepareConfig(config)
        return call?.joinedRTC == true || preJoined != nil ? [.renewRTCToken(token)] : []
    }
}
