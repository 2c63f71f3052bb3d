/// The call logic of one endpoint: a value that takes a ``CallInput`` and returns the ``CallAction``s to
/// perform, as `docs/spec/call-behaviour.md` describes, case by case.
///
/// Pure and synchronous: no I/O, clocks, timers or threads. Time comes in with each input; identifiers
/// that need randomness (the `callId`) come in with the request. `CallApiImpl` is the shell that performs
/// the actions and feeds back their outcomes.
package struct CallStateMachine: Sendable {
    /// How much older than the ring timeout a call message may look before it is treated as stale, when its
    /// age is judged by the sender's clock (phones' clocks drift) or by the channel's (servers' drift less).
    package static let senderClockSkewAllowanceMillis: Int64 = 5_000
    package static let channelClockSkewAllowanceMillis: Int64 = 1_000

    package internal(set) var state: CallStateType = .idle
    package private(set) var userId: UInt?
    package private(set) var prepareConfig: PrepareConfig?
    var call: CurrentCall?
    private var lastMessageId = 0
    private var recent = RecentMessages()
    package internal(set) var reliability = CallReliability.standard
    /// Our reliably sent messages awaiting acknowledgement, by messageId.
    var outstanding: [Int: OutstandingMessage] = [:]
    /// What we learnt of each peer: true if it acknowledges (speaks our reliability extension), false if its
    /// messages come without the mark (wire format 1.0 only). Bounded.
    var peerCapabilities = PeerCapabilities()
    /// This device among the user's devices, stamped on every message sent (docs/multi-device.md); nil sends
    /// messages without it, as the existing clients do.
    package let deviceId: String?

    package init(deviceId: String? = nil) {
        self.deviceId = deviceId
    }

    /// The current call's id, or `""` outside a call.
    package var callId: String { call?.callId ?? "" }

    /// Handles one input at wall time `now` (milliseconds since 1970) and returns what to do.
    package mutating func handle(_ input: CallInput, now: Int64) -> [CallAction] {
        let actions = dispatch(input, now: now)
        return trackReliableSends(actions, now: now) + armLivenessTimers(now: now)
    }

    private mutating func dispatch(_ input: CallInput, now: Int64) -> [CallAction] {
        switch input {
        case .initialize(let userId, let reliability): return initialize(userId: userId, reliability: reliability)
        case .deinitialize: return deinitialize(now: now)
        case .prepare(let config): return prepare(config)
        case .call(let remoteUserId, let type, let ext, let callId):
            return placeCall(to: remoteUserId, type: type, extension: ext, callId: callId, now: now)
        case .cancel: return cancel(now: now)
        case .accept(let remoteUserId): return accept(from: remoteUserId, now: now)
        case .reject(let remoteUserId, let reason): return reject(remoteUserId, reason: reason, now: now)
        case .hangup(let remoteUserId, let reason): return hangup(remoteUserId, reason: reason, now: now)
        case .renewToken(let token): return renewToken(token)
        case .received(let text, let sender): return receive(text, sender: sender, now: now)
        case .sendFinished(let message, let to, let error): return sendFinished(message, to: to, error: error, now: now)
        case .rtc(let event): return handleRTC(event, now: now)
        case .ringTimerFired(let callId): return ringTimerFired(callId, now: now)
        case .timerFired(let timer): return timerFired(timer, now: now)
        case .earlyJoinDecided(let callId, let allowed): return earlyJoinDecided(callId, allowed: allowed)
        case .rtcTokenFetched(let callId, let outcome): return rtcTokenFetched(callId, outcome, now: now)
        }
    }

    // MARK: - Building blocks shared by the input handlers

    /// A new outgoing message stamped with the next message id.
    mutating func message(
        _ action: MessageAction, callId: String, now: Int64, configure: (inout CallMessage) -> Void = { _ in }
    ) -> CallMessage {
        lastMessageId += 1
        var message = CallMessage(
            action: action, timestamp: now, messageId: lastMessageId, fromUserId: userId ?? 0, callId: callId,
            fromUserExtension: action.isCallFlow ? prepareConfig?.userExtensionJSON : nil,
            reliable: reliability.acknowledges)
        message.deviceId = deviceId
        configure(&message)
        return message
    }

    mutating func setState(
        _ newState: CallStateType, _ reason: CallStateReason, eventReason: String = "",
        info: [String: JSONValue] = [:]
    ) -> CallAction {
        state = newState
        return .notifyState(CallStateChange(state: newState, reason: reason, eventReason: eventReason, eventInfo: info))
    }

    func refuse(_ what: String, code: CallAPIError.Code = .stateMismatch) -> [CallAction] {
        let message = "\(what) (state: \(state))"
        var actions: [CallAction] = [.log(.warning, message)]
        if code == .stateMismatch { actions.append(.notifyEvent(.stateMismatch, reason: message)) }
        actions.append(.completeRequest(CallAPIError(code, message)))
        return actions
    }

    /// Joins the current call's room, publishing and subscribing as the call type needs, remote audio muted;
    /// with a token provider, asks it for the room's token first.
    mutating func joinCallRoom() -> [CallAction] {
        guard var call, !call.joinedRTC, let userId else { return [] }
        call.joinedRTC = true
        if prepareConfig?.rtcTokenProvider != nil {
            call.awaitingToken = true
            self.call = call
            return [
                .fetchRTCToken(callId: call.callId, channel: call.room, uid: userId),
                .notifyEvent(.joinRTCStart, reason: nil),
            ]
        }
        self.call = call
        return join(call, token: prepareConfig?.rtcToken ?? "", userId: userId) + [
            .notifyEvent(.joinRTCStart, reason: nil)
        ]
    }

    private func join(_ call: CurrentCall, token: String, userId: UInt) -> [CallAction] {
        let join = RTCJoin(
            channel: call.room, token: token, uid: userId, remoteUid: call.peer, media: .call(call.type),
            localView: call.type == .video ? CanvasRef(prepareConfig?.localView) : nil,
            remoteView: call.type == .video ? CanvasRef(prepareConfig?.remoteView) : nil)
        return [.joinRTC(join), .setRemoteVolume(uid: call.peer, volume: 0)]
    }

    /// The provider answered: join with the token, or fail the call as a join failure would.
    mutating func rtcTokenFetched(
        _ callId: String, _ outcome: Result<String, CallAPIError>, now: Int64
    ) -> [CallAction] {
        guard var call, call.callId == callId, call.awaitingToken, let userId else { return [] }
        call.awaitingToken = false
        self.call = call
        switch outcome {
        case .success(let token):
            return join(call, token: token, userId: userId)
        case .failure(let error):
            return joinFailed(code: error.code.rawValue, message: "no RTC token: \(error.message)", now: now)
        }
    }

    /// The room of a call this user places: the prepared room, or a fresh one named from the user and call
    /// ids (channel names allow `A-Z a-z 0-9 . _ -`, at most 64 characters).
    func roomForNewCall(callId: String, userId: UInt) -> String {
        if let room = prepareConfig?.roomId, !room.isEmpty { return room }
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
        return String("\(userId)-\(callId.filter(allowed.contains))".prefix(64))
    }

    /// Every way out of a call: stop the timer, leave RTC, report the new state and event, and
    /// `onCallDisconnected` when the call had connected.
    mutating func endCall(
        _ newState: CallStateType, _ reason: CallStateReason, event: CallEvent?, endedBy: UInt,
        eventReason: String = "", info: [String: JSONValue] = [:], now: Int64
    ) -> [CallAction] {
        guard let ending = call else { return [] }
        call = nil
        var actions: [CallAction] = [.stopRingTimer]
        if ending.keepAliveArmed { actions.append(.stopTimer(.keepAlive(callId: ending.callId))) }
        if ending.silenceArmed { actions.append(.stopTimer(.peerSilence(callId: ending.callId))) }
        if ending.remoteLeftArmed { actions.append(.stopTimer(.remoteLeftGrace(callId: ending.callId))) }
        actions.append(.leaveRTC(remoteUid: ending.peer))
        if ending.joinedRTC { actions.append(.notifyEvent(.localLeft, reason: nil)) }
        var info = info
        info[kPublisher] = .int(Int(endedBy))
        actions.append(setState(newState, reason, eventReason: eventReason, info: info))
        if let event { actions.append(.notifyEvent(event, reason: eventReason.isEmpty ? nil : eventReason)) }
        if let connectedAt = ending.connectedAt, let userId {
            actions.append(
                .notifyDisconnected(
                    roomId: ending.room, hangupUserId: endedBy, selfId: userId,
                    durationMillis: max(0, now - connectedAt)))
        }
        return actions
    }

    /// The message that ends the current call on the peer's side when this side ends it by itself: cancel
    /// from a ringing caller, reject from a ringing callee, hangup once connecting.
    mutating func endingMessage(reason: String, now: Int64) -> CallMessage {
        let call = call!
        if state == .calling && call.isCaller { return message(.cancelCall, callId: call.callId, now: now) }
        if state == .calling { return message(.reject, callId: call.callId, now: now) { $0.rejectReason = reason } }
        return message(.hangup, callId: call.callId, now: now) { $0.hangupReason = reason }
    }

    /// In connecting: go connected once first-frame waiting is off or the remote first frame is in.
    mutating func connectedCheck(reason: CallStateReason, now: Int64) -> [CallAction] {
        guard state == .connecting, var call, let userId else { return [] }
        let waiting = !(prepareConfig?.firstFrameWaittingDisabled ?? false)
        guard !waiting || call.firstFrameArrived else { return [] }
        call.connectedAt = now
        self.call = call
        let info: [String: JSONValue] = [
            kFromRoomId: .string(call.room),
            kFromUserId: .int(Int(call.peer)),
            kRemoteUserId: .int(Int(userId)),
            kCallId: .string(call.callId),
            kCostTimeMap: call.costs.json,
            kPublisher: .int(Int(reason == .localAccepted ? userId : call.peer)),
        ]
        return [
            .stopRingTimer,
            .setRemoteVolume(uid: call.peer, volume: 100),
            setState(.connected, reason, info: info),
            .notifyConnected(roomId: call.room, callerId: call.isCaller ? userId : call.peer, selfId: userId),
        ]
    }

    mutating func recordCost(_ stage: String, now: Int64) {
        guard let started = call?.startedAt else { return }
        call?.costs.record(stage, startedAt: started, now: now)
    }

    mutating func updateCall(_ change: (inout CurrentCall) -> Void) {
        guard var call else { return }
        change(&call)
        self.call = call
    }

    mutating func startCall(_ newCall: CurrentCall) -> [CallAction] {
        call = newCall
        call?.lastHeardAt = newCall.startedAt
        guard let timeout = prepareConfig?.callTimeoutMillisecond, timeout > 0 else { return [] }
        return [.startRingTimer(callId: newCall.callId, millis: Int64(clamping: timeout))]
    }

    /// Seen (and remembers) a message: a repeat is handled once.
    mutating func isRepeat(_ message: CallMessage, sender: UInt) -> Bool {
        if recent.contains(message, sender: sender) { return true }
        recent.insert(message, sender: sender)
        return false
    }

    mutating func setInitialized(_ userId: UInt?, reliability: CallReliability = .standard) {
        self.userId = userId
        self.reliability = reliability
        if userId == nil {
            prepareConfig = nil
            outstanding = [:]
        }
    }

    mutating func setPrepareConfig(_ config: PrepareConfig) { prepareConfig = config }
}
