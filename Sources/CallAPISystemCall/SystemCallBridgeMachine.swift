import Foundation

/// Maps pushes, CallAPI's state changes and the system call screen's actions onto each other: which call
/// the system shows, which CallAPI request a user's action on the system screen becomes, and which system
/// report a CallAPI ending becomes.
///
/// Pure and synchronous: time comes in with each input; timers are actions the shell performs. One call is
/// bridged at a time, as CallAPI has one call at a time; a push for another call while one is under way is
/// reported and ended at once (as unanswered: the system lists it as missed), since CallAPI answers it busy.
package struct SystemCallBridgeMachine: Sendable {
    /// The one call the bridge follows.
    package enum State: Sendable, Equatable {
        case idle
        /// Reported from a push; CallAPI has not rung it yet. `answered`: the user answered on the system
        /// screen already, so the call is accepted as soon as it rings.
        case awaitingSignaling(BridgedCall, answered: Bool)
        /// Rings in CallAPI and on the system screen.
        case ringing(BridgedCall)
        /// Answered on the system screen and accepted in CallAPI; the answer action waits for `connecting`.
        case answering(BridgedCall)
        /// Placed by this user; rings at the peer.
        case outgoing(BridgedCall)
        case connecting(BridgedCall)
        case connected(BridgedCall)
    }

    /// A call as the bridge knows it.
    package struct BridgedCall: Sendable, Equatable {
        package var report: SystemCallReport
        package var isOutgoing: Bool
        package var muted = false

        var callId: String { report.callId }
        var uuid: UUID { report.uuid }
    }

    package private(set) var state = State.idle
    private var ended = EndedCalls()
    private let configuration: SystemCallBridgeConfiguration

    package init(configuration: SystemCallBridgeConfiguration = .init()) {
        self.configuration = configuration
    }

    /// The call the bridge follows, if any.
    package var call: BridgedCall? {
        switch state {
        case .idle: nil
        case .awaitingSignaling(let call, _), .ringing(let call), .answering(let call), .outgoing(let call),
            .connecting(let call), .connected(let call):
            call
        }
    }

    package mutating func handle(_ input: SystemCallBridgeInput, now: Int64) -> [SystemCallBridgeAction] {
        switch input {
        case .pushReceived(let push): pushReceived(push, now: now)
        case .unreadablePushReceived(let raw, let problem): unreadablePush(raw, problem: problem)
        case .pushedCallWithdrawn(let callId, let withdrawal): withdrawn(callId, withdrawal)
        case .callAPI(let update): callAPI(update)
        case .system(let request, let uuid): system(request, uuid: uuid)
        case .timerFired(let timer): timerFired(timer)
        }
    }

    // MARK: - Pushes

    private mutating func pushReceived(_ push: SystemCallPush, now: Int64) -> [SystemCallBridgeAction] {
        let report = SystemCallReport(
            uuid: push.uuid, callId: push.callId, remoteUserId: push.callerId, displayName: push.callerName,
            video: push.video)
        // Every push is reported, even when nothing will ring: the platform requires it.
        if let reason = ended.reason(of: push.callId) {
            return [
                .log("push for call \(push.callId), which is over: reported and ended"), .reportIncoming(report),
                .reportEnded(report.uuid, reason),
            ]
        }
        if let current = call {
            guard current.callId != push.callId else {
                // Reported again: the system answers that the call exists, which satisfies it and shows nothing new.
                return [.log("push for call \(push.callId), which is already on the screen"), .reportIncoming(report)]
            }
            ended.insert(push.callId, reason: .unanswered)
            return [
                .log("push for call \(push.callId) during call \(current.callId): reported and ended as missed"),
                .reportIncoming(report), .reportEnded(report.uuid, .unanswered),
            ]
        }
        let wait = min(
            push.ringDeadlineMillis + configuration.arrivalGraceMillis - now, configuration.maxArrivalWaitMillis)
        guard wait > 0 else {
            ended.insert(push.callId, reason: .unanswered)
            return [
                .log("push for call \(push.callId) came \(-wait) ms after its ring time: reported and ended"),
                .reportIncoming(report), .reportEnded(report.uuid, .unanswered),
            ]
        }
        state = .awaitingSignaling(BridgedCall(report: report, isOutgoing: false), answered: false)
        return [.reportIncoming(report), .startTimer(.arrival(callId: push.callId), millis: wait)]
    }

    private mutating func unreadablePush(_ raw: String, problem: String) -> [SystemCallBridgeAction] {
        let uuid = CallUUID.nameBased(namespace: CallUUID.namespace, name: "unreadable push: \(raw)")
        let report = SystemCallReport(uuid: uuid, callId: "", remoteUserId: 0, displayName: nil, video: false)
        return [
            .log("unreadable push reported and ended: \(problem)"), .reportIncoming(report),
            .reportEnded(uuid, .failed),
        ]
    }

    private mutating func withdrawn(_ callId: String, _ withdrawal: SystemCallWithdrawal) -> [SystemCallBridgeAction] {
        guard let current = call, current.callId == callId else {
            // Its push may still be on its way: remember, so it is ended as soon as it is reported.
            ended.insert(callId, reason: withdrawal.endReason)
            return [.log("call \(callId) withdrawn (\(withdrawal)) before its push came")]
        }
        switch state {
        case .awaitingSignaling, .ringing:
            // A call CallAPI already rings is left to CallAPI's own signaling to end there; only the screen stops.
            return end(current, reporting: withdrawal.endReason)
        default:
            return [.log("withdrawal of call \(callId) ignored: it is already \(state)")]
        }
    }

    // MARK: - CallAPI

    private mutating func callAPI(_ update: CallAPIUpdate) -> [SystemCallBridgeAction] {
        switch update {
        case .ringing(let callId, let callerId, let video, let name):
            return ringing(callId: callId, callerId: callerId, video: video, name: name)
        case .placed(let callId, let calleeId, let video):
            guard case .idle = state else { return [.log("call \(callId) placed while \(state): not bridged")] }
            let report = SystemCallReport(
                uuid: CallUUID.of(callId: callId), callId: callId, remoteUserId: calleeId, displayName: nil,
                video: video)
            state = .outgoing(BridgedCall(report: report, isOutgoing: true))
            return [.reportOutgoingStarted(report)]
        case .connecting(let callId):
            guard let call, callId == nil || callId == call.callId else { return [] }
            return connecting(call)
        case .connected(let callId):
            guard let call, callId == nil || callId == call.callId else { return [] }
            switch state {
            case .ringing, .answering, .outgoing, .connecting: break
            case .idle, .awaitingSignaling, .connected: return []
            }
            var actions = connecting(call)
            state = .connected(call)
            if call.isOutgoing { actions.append(.reportOutgoingConnected(call.uuid)) }
            return actions
        case .ended(let callId, let ending):
            guard let call, callId == nil || callId == call.callId else { return [] }
            if case .awaitingSignaling = state { return [] }  // CallAPI never had this call
            switch ending {
            case .local: return end(call, reporting: nil)
            case .remote(let reason): return end(call, reporting: reason)
            }
        }
    }

    private mutating func ringing(
        callId: String, callerId: UInt, video: Bool, name: String?
    ) -> [SystemCallBridgeAction] {
        if ended.reason(of: callId) != nil {
            return [
                .log("call \(callId) rings but is over on the system screen: rejected"),
                .reject(remoteUserId: callerId),
            ]
        }
        switch state {
        case .idle:
            let report = SystemCallReport(
                uuid: CallUUID.of(callId: callId), callId: callId, remoteUserId: callerId, displayName: name,
                video: video)
            state = .ringing(BridgedCall(report: report, isOutgoing: false))
            return [.reportIncoming(report)]
        case .awaitingSignaling(var call, let answered) where call.report.remoteUserId == callerId:
            // The pushed call (or the same caller's next call, which replaces it) arrived: one system call.
            var actions: [SystemCallBridgeAction] = [.stopTimer(.arrival(callId: call.callId))]
            if call.callId != callId {
                if answered { actions.append(.stopTimer(.answer(callId: call.callId))) }
                call.report.callId = callId
                if answered {
                    actions.append(.startTimer(.answer(callId: callId), millis: configuration.answerTimeoutMillis))
                }
            }
            guard answered else {
                state = .ringing(call)
                return actions
            }
            state = .answering(call)
            return actions + [.accept(remoteUserId: callerId)]
        case .awaitingSignaling(let pushed, _):
            // Another caller rings while the pushed call never came: that one is over.
            var actions = end(pushed, reporting: .failed)
            let report = SystemCallReport(
                uuid: CallUUID.of(callId: callId), callId: callId, remoteUserId: callerId, displayName: name,
                video: video)
            state = .ringing(BridgedCall(report: report, isOutgoing: false))
            actions.append(.reportIncoming(report))
            return actions
        case .ringing(var call) where call.report.remoteUserId == callerId:
            // The caller called again; CallAPI takes the new call in place of the old one.
            call.report.callId = callId
            state = .ringing(call)
            return []
        case .outgoing(var call) where call.report.remoteUserId == callerId:
            // Glare: both called each other and CallAPI took the peer's call in place of ours.
            call.report.callId = callId
            state = .outgoing(call)
            return [.log("glare with user \(callerId): the system call continues as call \(callId)")]
        default:
            return [.log("call \(callId) rings while \(state): not bridged")]
        }
    }

    /// CallAPI reached `connecting` (or `connected`, which passes through it).
    private mutating func connecting(_ call: BridgedCall) -> [SystemCallBridgeAction] {
        var actions: [SystemCallBridgeAction] = []
        switch state {
        case .answering:
            actions += [.stopTimer(.answer(callId: call.callId)), .complete(.answer, call.uuid, fulfilled: true)]
        case .ringing:
            actions.append(.requestAnswer(call.uuid))  // accepted in the app, not on the system screen
        case .outgoing:
            actions.append(.reportOutgoingConnecting(call.uuid))
        case .idle, .awaitingSignaling, .connecting, .connected:
            return []
        }
        // The join at accept publishes the microphone: a mute set while ringing is applied again.
        if call.muted { actions.append(.setMicrophoneMuted(true, video: call.report.video)) }
        state = .connecting(call)
        return actions
    }

    // MARK: - The system screen

    private mutating func system(_ request: SystemCallRequest, uuid: UUID) -> [SystemCallBridgeAction] {
        guard var call, call.uuid == uuid else {
            // Ending a call that is already over is done; answering or muting it cannot be.
            let fulfilled = request == .end
            return [
                .log("system \(request.kind) for a call that is not under way"),
                .complete(request.kind, uuid, fulfilled: fulfilled),
            ]
        }
        switch request {
        case .answer:
            return answer(call)
        case .end:
            let ending: [SystemCallBridgeAction]
            switch state {
            case .idle, .awaitingSignaling: ending = []
            case .ringing: ending = [.reject(remoteUserId: call.report.remoteUserId)]
            case .outgoing: ending = [.cancel]
            case .answering, .connecting, .connected: ending = [.hangup(remoteUserId: call.report.remoteUserId)]
            }
            return end(call, reporting: nil, requestedBySystem: true) + ending + [
                .complete(.end, uuid, fulfilled: true)
            ]
        case .setMuted(let muted):
            call.muted = muted
            var actions: [SystemCallBridgeAction] = []
            switch state {
            case .idle: break
            case .awaitingSignaling(_, let answered): state = .awaitingSignaling(call, answered: answered)
            case .ringing: state = .ringing(call)
            case .answering: state = .answering(call)
            case .outgoing: state = .outgoing(call)
            case .connecting: state = .connecting(call)
            case .connected: state = .connected(call)
            }
            if case .awaitingSignaling = state {
            } else {
                actions.append(.setMicrophoneMuted(muted, video: call.report.video))
            }
            return actions + [.complete(.mute, uuid, fulfilled: true)]
        }
    }

    private mutating func answer(_ call: BridgedCall) -> [SystemCallBridgeAction] {
        let timer = SystemCallBridgeAction.startTimer(
            .answer(callId: call.callId), millis: configuration.answerTimeoutMillis)
        switch state {
        case .awaitingSignaling(_, answered: false):
            state = .awaitingSignaling(call, answered: true)
            return [timer]
        case .ringing:
            state = .answering(call)
            return [.accept(remoteUserId: call.report.remoteUserId), timer]
        case .connecting, .connected:
            return [.complete(.answer, call.uuid, fulfilled: true)]  // accepted in the app already
        case .idle, .awaitingSignaling, .answering, .outgoing:
            return [.log("system answer ignored while \(state)"), .complete(.answer, call.uuid, fulfilled: false)]
        }
    }

    // MARK: - Timers

    private mutating func timerFired(_ timer: SystemCallTimer) -> [SystemCallBridgeAction] {
        guard let call else { return [] }
        switch (timer, state) {
        case (.arrival(let callId), .awaitingSignaling) where callId == call.callId:
            return [.log("pushed call \(callId) did not arrive over signaling in time")]
                + end(call, reporting: .failed)
        case (.answer(let callId), .awaitingSignaling(_, answered: true)) where callId == call.callId:
            return [.log("answered call \(callId) did not connect in time")] + end(call, reporting: .failed)
        case (.answer(let callId), .answering) where callId == call.callId:
            return [.log("answered call \(callId) did not connect in time")] + end(call, reporting: .failed)
                + [.hangup(remoteUserId: call.report.remoteUserId)]
        default:
            return []
        }
    }

    // MARK: - Ending

    /// Ends the bridged call: stops its timers, fails a pending answer, and tells the system (a reason it shows,
    /// or, when this user ended it in the app, a request to end it); nothing when the system itself ended it.
    private mutating func end(
        _ call: BridgedCall, reporting reason: SystemCallEndReason?, requestedBySystem: Bool = false
    ) -> [SystemCallBridgeAction] {
        var actions: [SystemCallBridgeAction] = []
        switch state {
        case .awaitingSignaling(_, let answered):
            actions.append(.stopTimer(.arrival(callId: call.callId)))
            if answered {
                actions += [.stopTimer(.answer(callId: call.callId)), .complete(.answer, call.uuid, fulfilled: false)]
            }
        case .answering:
            actions += [.stopTimer(.answer(callId: call.callId)), .complete(.answer, call.uuid, fulfilled: false)]
        case .idle, .ringing, .outgoing, .connecting, .connected:
            break
        }
        if let reason {
            actions.append(.reportEnded(call.uuid, reason))
        } else if !requestedBySystem {
            actions.append(.requestEnd(call.uuid))
        }
        ended.insert(call.callId, reason: reason ?? .remoteEnded)
        state = .idle
        return actions
    }
}
