import CallAPI
import Foundation

/// What happens to a legacy endpoint.
package enum LegacyInput: Sendable {
    case call(to: UInt, type: CallType, callId: String)
    case accept
    case reject(reason: String?)
    case cancel
    case hangup(reason: String?)
    case received(String)
    case ringTimerFired(generation: Int)
    case remoteFirstFrame(uid: UInt)
    case remoteLeftChannel(uid: UInt)
}

/// What a legacy endpoint asks its shell to do, in order.
package enum LegacyAction: Sendable, Equatable {
    case send([String: JSONValue], to: UInt)
    case joinRTC(room: String, type: CallType)
    case leaveRTC
    case startRingTimer(generation: Int, millis: Int64)
    case stopRingTimer
    case report(CallStateType, CallStateReason)
}

/// The call logic of a deployed CallAPI 2.x client, as `wire-format.md` records it: no acknowledgements,
/// no de-duplication, messages matched to the call by user only, a busy reject stamped with its own
/// current `callId`, a ring timer that cancels (with `cancelCallByInternal` 1) from either role, and a
/// repeated call that rings again. The differences between the iOS and the Web client are ``LegacyFlavour``.
package struct LegacyCallMachine: Sendable {
    package let flavour: LegacyFlavour
    package let userId: UInt
    /// The room this endpoint's own calls use.
    package let room: String
    package let ringTimeoutMillis: Int64
    package private(set) var state = LegacyCallState.prepared
    private var lastMessageId = 0
    private var ringGeneration = 0

    package init(flavour: LegacyFlavour, userId: UInt, room: String, ringTimeoutMillis: Int64) {
        self.flavour = flavour
        self.userId = userId
        self.room = room
        self.ringTimeoutMillis = ringTimeoutMillis
    }

    package mutating func handle(_ input: LegacyInput, now: Int64) -> [LegacyAction] {
        switch input {
        case .call(let peer, let type, let callId): placeCall(to: peer, type: type, callId: callId, now: now)
        case .accept: accept(now: now)
        case .reject(let reason):
            leave(
                .reject, ["rejectReason": reason.map(JSONValue.string) ?? .null, "rejectByInternal": .int(0)],
                .localRejected, now: now)
        case .cancel: leave(.cancelCall, ["cancelCallByInternal": .int(0)], .localCancelled, now: now)
        case .hangup(let reason):
            leave(.hangup, ["hangupReason": reason.map(JSONValue.string) ?? .null], .localHangup, now: now)
        case .received(let text): receive(text, now: now)
        case .ringTimerFired(let generation): ringTimerFired(generation, now: now)
        case .remoteFirstFrame(let uid): remoteFirstFrame(from: uid)
        case .remoteLeftChannel(let uid): remoteLeft(uid)
        }
    }

    // MARK: - Local actions

    private mutating func placeCall(to peer: UInt, type: CallType, callId: String, now: Int64) -> [LegacyAction] {
        guard state == .prepared else { return [] }
        let call = LegacyCall(peer: peer, callId: callId, room: room, type: type, isCaller: true, localAccepted: true)
        state = .calling(call)
        let message = message(
            .call(type), call: call, now: now, ["remoteUserId": .int(Int(peer)), "fromRoomId": .string(room)])
        return [
            .send(message, to: peer),
            .report(.calling, type == .video ? .localVideoCall : .localAudioCall),
            startRingTimer(),
            .joinRTC(room: room, type: type),
        ]
    }

    private mutating func accept(now: Int64) -> [LegacyAction] {
        guard case .calling(var call) = state, !call.isCaller else { return [] }
        call.localAccepted = true
        state = .connecting(call)
        return [.send(message(.accept, call: call, now: now), to: call.peer), .report(.connecting, .localAccepted)]
            + connectedCheck(.localAccepted)
    }

    /// Cancel, reject or hang up: the deployed clients send it and go prepared in any call state.
    private mutating func leave(
        _ action: MessageAction, _ extra: [String: JSONValue], _ reason: CallStateReason, now: Int64
    ) -> [LegacyAction] {
        guard let call = state.call else { return [] }
        return [.send(message(action, call: call, now: now, extra.filter { $0.value != .null }), to: call.peer)]
            + end(reason)
    }

    // MARK: - Received messages

    private mutating func receive(_ text: String, now: Int64) -> [LegacyAction] {
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8)),
            object["message_version"]?.stringValue == "1.0",
            let rawAction = object[CallMessageKey.messageAction.name]?.intValue,
            let from = object["fromUserId"]?.intValue.flatMap({ $0 >= 0 ? UInt($0) : nil })
        else { return [] }
        let callId = object["callId"]?.stringValue ?? ""
        switch MessageAction(rawValue: rawAction) {
        case .videoCall:
            return receiveCall(.video, from: from, callId: callId, room: object["fromRoomId"]?.stringValue, now: now)
        case .audioCall:
            guard flavour.answersAudioCalls else { return [] }
            return receiveCall(.audio, from: from, callId: callId, room: object["fromRoomId"]?.stringValue, now: now)
        case .cancelCall:
            guard state.call?.peer == from else { return [] }
            let timedOut = object["cancelCallByInternal"]?.intValue == 1 && flavour.reportsRemoteCallingTimeout
            return end(timedOut ? .remoteCallingTimeout : .remoteCancelled)
        case .accept:
            guard case .calling(let call) = state, call.localAccepted,
                flavour.acceptsAcceptFromAnyone || call.peer == from
            else { return [] }
            state = .connecting(call)
            return [.report(.connecting, .remoteAccepted)] + connectedCheck(.remoteAccepted)
        case .reject:
            guard state.call?.peer == from else { return [] }
            return end(object["rejectByInternal"]?.intValue == 1 ? .remoteCallBusy : .remoteRejected)
        case .hangup:
            guard state.call?.peer == from else { return [] }
            return end(.remoteHangup)
        case .ack, .keepAlive, nil:
            return []  // unknown actions are logged and dropped
        }
    }

    private mutating func receiveCall(
        _ type: CallType, from: UInt, callId: String, room: String?, now: Int64
    ) -> [LegacyAction] {
        let room = room ?? ""
        guard let current = state.call else { return ring(type, from: from, callId: callId, room: room) }
        guard current.peer == from else {
            // Busy, stamped with the callId of its own current call.
            var extra: [String: JSONValue] = ["rejectReason": .string(flavour.busyReason), "rejectByInternal": .int(1)]
            if !flavour.sendsMessageId { extra["remoteUserId"] = .int(Int(from)) }
            let busy = message(.reject, call: current, now: now, extra)
            return [.send(busy, to: from)]
        }
        if case .calling = state, !flavour.ringsAgainWhileCalling {
            // iOS: the same caller again while ringing updates the call, with no new notification.
            var updated = current
            updated.callId = callId
            updated.room = room
            state = .calling(updated)
            return []
        }
        // A repeat from the same user rings again, whatever the state: its ring timer restarts and a
        // connected call goes back to calling.
        let wasCalling = state.type == .calling
        var actions: [LegacyAction] = current.room == room ? [] : [.leaveRTC]
        var again = LegacyCall(
            peer: from, callId: callId, room: room, type: type, isCaller: false, localAccepted: false)
        again.firstFrameArrived = current.room == room && current.firstFrameArrived
        state = .calling(again)
        if !wasCalling { actions.append(.report(.calling, type == .video ? .remoteVideoCall : .remoteAudioCall)) }
        actions.append(startRingTimer())
        if current.room != room { actions.append(.joinRTC(room: room, type: type)) }
        return actions
    }

    private mutating func ring(_ type: CallType, from: UInt, callId: String, room: String) -> [LegacyAction] {
        state = .calling(
            LegacyCall(peer: from, callId: callId, room: room, type: type, isCaller: false, localAccepted: false))
        return [
            .report(.calling, type == .video ? .remoteVideoCall : .remoteAudioCall), startRingTimer(),
            .joinRTC(room: room, type: type),
        ]
    }

    // MARK: - Timer and media

    private mutating func ringTimerFired(_ generation: Int, now: Int64) -> [LegacyAction] {
        guard generation == ringGeneration, let call = state.call, state.type != .connected else { return [] }
        return [.send(message(.cancelCall, call: call, now: now, ["cancelCallByInternal": .int(1)]), to: call.peer)]
            + end(.callingTimeout)
    }

    private mutating func remoteFirstFrame(from uid: UInt) -> [LegacyAction] {
        guard var call = state.call, call.peer == uid else { return [] }
        call.firstFrameArrived = true
        switch state {
        case .calling: state = .calling(call)
        case .connecting: state = .connecting(call)
        case .prepared, .connected: return []
        }
        return connectedCheck(.recvRemoteFirstFrame)
    }

    private mutating func remoteLeft(_ uid: UInt) -> [LegacyAction] {
        guard flavour.endsCallWhenPeerLeavesChannel, state.call?.peer == uid else { return [] }
        return end(.remoteHangup)
    }

    // MARK: - Building blocks

    private mutating func connectedCheck(_ reason: CallStateReason) -> [LegacyAction] {
        guard case .connecting(let call) = state, call.firstFrameArrived else { return [] }
        state = .connected(call)
        return [.stopRingTimer, .report(.connected, reason)]
    }

    private mutating func end(_ reason: CallStateReason) -> [LegacyAction] {
        state = .prepared
        return [.stopRingTimer, .leaveRTC, .report(.prepared, reason)]
    }

    private mutating func startRingTimer() -> LegacyAction {
        ringGeneration += 1
        return .startRingTimer(generation: ringGeneration, millis: ringTimeoutMillis)
    }

    private mutating func message(
        _ action: MessageAction, call: LegacyCall, now: Int64, _ extra: [String: JSONValue] = [:]
    ) -> [String: JSONValue] {
        var object: [String: JSONValue] = [
            CallMessageKey.messageAction.name: .int(action.rawValue), "message_version": .string("1.0"),
            "message_timestamp": .int(Int(now)), "fromUserId": .int(Int(userId)), "callId": .string(call.callId),
        ]
        if flavour.sendsMessageId {
            lastMessageId += 1
            object["messageId"] = .int(lastMessageId)
        } else {
            // The Web client names the peer in every message.
            object["remoteUserId"] = .int(Int(call.peer))
        }
        return object.merging(extra) { _, new in new }
    }
}

extension MessageAction {
    fileprivate static func call(_ type: CallType) -> MessageAction { type == .video ? .videoCall : .audioCall }
}
