import CallAPI
import CallAPITesting
import Foundation

/// Drives one pure ``CallStateMachine`` by hand: the shell's part (time, callIds, answers to
/// `askCanJoinOnCalling`) is played by the test.
struct MachineDriver {
    /// The states a local action can meet (call-behaviour.md, "Local actions").
    enum Situation: String, CaseIterable, Sendable, CustomStringConvertible {
        case idleUninitialized, idleInitialized, prepared, callingAsCaller, callingAsCallee, connecting, connected
        case connectingAsCallee, connectedAsCallee, failed

        /// Whether the endpoint under test answered the call rather than placed it.
        var isCallee: Bool { self == .callingAsCallee || self == .connectingAsCallee || self == .connectedAsCallee }

        var description: String { rawValue }

        var state: CallStateType {
            switch self {
            case .idleUninitialized, .idleInitialized: .idle
            case .prepared: .prepared
            case .callingAsCaller, .callingAsCallee: .calling
            case .connecting, .connectingAsCallee: .connecting
            case .connected, .connectedAsCallee: .connected
            case .failed: .failed
            }
        }
    }

    static let start: Int64 = 1_767_225_600_000
    static let selfId: UInt = 1
    static let peerId: UInt = 2
    static let otherId: UInt = 3
    static let ownRoom = "room-1"
    static let peerRoom = "room-2"
    static let ownCallId = "call-own"
    static let peerCallId = "call-peer"

    var machine = CallStateMachine()
    var now: Int64 = MachineDriver.start
    /// The message id the fake peers stamp on what they send.
    var nextPeerMessageId = 100

    static func prepareConfig(
        timeout: UInt64 = 15_000, firstFrameWaittingDisabled: Bool = false, userExtension: [String: Any]? = nil
    ) -> PrepareConfig {
        PrepareConfig(
            roomId: ownRoom, rtcToken: "token-1", localView: TestCanvas("local"), remoteView: TestCanvas("remote"),
            callTimeoutMillisecond: timeout, firstFrameWaittingDisabled: firstFrameWaittingDisabled,
            userExtension: userExtension)
    }

    /// A machine brought into `situation` the way the spec says one gets there.
    init(_ situation: Situation, config: PrepareConfig = MachineDriver.prepareConfig(), type: CallType = .video) {
        guard situation != .idleUninitialized else { return }
        handle(.initialize(userId: Self.selfId))
        guard situation != .idleInitialized else { return }
        handle(.prepare(config))
        switch situation {
        case .idleUninitialized, .idleInitialized, .prepared:
            break
        case .callingAsCaller:
            handle(.call(remoteUserId: Self.peerId, type: type, extension: nil, callId: Self.ownCallId))
        case .callingAsCallee:
            ringFromPeer(type: type)
        case .connecting, .connected:
            handle(.call(remoteUserId: Self.peerId, type: type, extension: nil, callId: Self.ownCallId))
            receive(.accept, callId: Self.ownCallId)
            if situation == .connected {
                let room = Self.ownRoom
                handle(
                    .rtc(
                        type == .video
                            ? .remoteFirstVideoFrameDecoded(channel: room, uid: Self.peerId)
                            : .remoteFirstAudioFrameDecoded(channel: room, uid: Self.peerId)))
            }
        case .connectingAsCallee, .connectedAsCallee:
            ringFromPeer(type: type)
            handle(.accept(remoteUserId: Self.peerId))
            if situation == .connectedAsCallee {
                let room = Self.peerRoom
                handle(
                    .rtc(
                        type == .video
                            ? .remoteFirstVideoFrameDecoded(channel: room, uid: Self.peerId)
                            : .remoteFirstAudioFrameDecoded(channel: room, uid: Self.peerId)))
            }
        case .failed:
            handle(.call(remoteUserId: Self.peerId, type: type, extension: nil, callId: Self.ownCallId))
            handle(.rtc(.joinFailed(channel: Self.ownRoom, code: 17, message: "no media")))
        }
        precondition(machine.state == situation.state, "could not reach \(situation): in \(machine.state)")
    }

    @discardableResult
    mutating func handle(_ input: CallInput) -> [CallAction] {
        machine.handle(input, now: now)
    }

    mutating func advance(_ millis: Int64) { now += millis }

    /// A message as a peer would send it, stamped now.
    mutating func message(
        _ action: MessageAction, callId: String, from: UInt = MachineDriver.peerId,
        configure: (inout CallMessage) -> Void = { _ in }
    ) -> CallMessage {
        nextPeerMessageId += 1
        var message = CallMessage(
            action: action, timestamp: now, messageId: nextPeerMessageId, fromUserId: from, callId: callId)
        if action == .videoCall || action == .audioCall {
            message.remoteUserId = Self.selfId
            message.fromRoomId = "room-\(from)"
        }
        configure(&message)
        return message
    }

    /// Delivers `action` from `from` (vouched for by the channel unless `vouched` is false).
    @discardableResult
    mutating func receive(
        _ action: MessageAction, callId: String, from: UInt = MachineDriver.peerId, vouched: Bool = true,
        configure: (inout CallMessage) -> Void = { _ in }
    ) -> [CallAction] {
        let message = message(action, callId: callId, from: from, configure: configure)
        return receive(text: message.encoded(), from: vouched ? from : nil)
    }

    @discardableResult
    mutating func receive(text: String, from: UInt?, receivedAt: Int64? = nil) -> [CallAction] {
        handle(
            .received(text: text, sender: from.map { SignalSender(userId: String($0), receivedAtMillis: receivedAt) }))
    }

    /// The peer calls this user; the listeners allow joining on ring.
    @discardableResult
    mutating func ringFromPeer(
        type: CallType = .video, callId: String = MachineDriver.peerCallId, from: UInt = MachineDriver.peerId,
        canJoin: Bool = true
    ) -> [CallAction] {
        var actions = receive(type == .video ? .videoCall : .audioCall, callId: callId, from: from)
        if actions.contains(where: \.isAskCanJoin) {
            actions += handle(.earlyJoinDecided(callId: callId, allowed: canJoin))
        }
        return actions
    }
}

extension CallAction {
    var isAskCanJoin: Bool { if case .askCanJoinOnCalling = self { true } else { false } }
    var isJoin: Bool { if case .joinRTC = self { true } else { false } }
    var isLeave: Bool { if case .leaveRTC = self { true } else { false } }
    var isLog: Bool { if case .log = self { true } else { false } }
    var isStartTimer: Bool { if case .startTimer(.ring, _) = self { true } else { false } }
    var isStopTimer: Bool { if case .stopTimer(.ring) = self { true } else { false } }
}

extension [CallAction] {
    var stateChanges: [CallStateChange] { compactMap { if case .notifyState(let c) = $0 { c } else { nil } } }
    var states: [CallStateType] { stateChanges.map(\.state) }
    var reasons: [CallStateReason] { stateChanges.map(\.reason) }
    var events: [CallEvent] { compactMap { if case .notifyEvent(let e, _) = $0 { e } else { nil } } }
    func eventReason(of event: CallEvent) -> String? {
        for case .notifyEvent(let e, let reason) in self where e == event { return reason }
        return nil
    }
    var sent: [(message: CallMessage, to: UInt)] {
        compactMap { if case .send(let m, let to, _) = $0 { (m, to) } else { nil } }
    }
    var joins: [RTCJoin] { compactMap { if case .joinRTC(let j) = $0 { j } else { nil } } }
    var tokenFetches: [TokenFetch] {
        compactMap {
            if case .fetchRTCToken(let callId, let channel, let uid, _) = $0 {
                TokenFetch(callId: callId, channel: channel, uid: uid)
            } else {
                nil
            }
        }
    }
    /// The outcome given to the request: `.some(nil)` success, `.some(error)`, or nil when not completed here.
    var completion: CallAPIError?? {
        for case .completeRequest(let error) in self { return .some(error) }
        if contains(where: { if case .send(_, _, true) = $0 { true } else { false } }) { return .some(nil) }
        return nil
    }
    var error: CallAPIError? { completion ?? nil }
    var volumes: [(uid: UInt, volume: Int)] {
        compactMap { if case .setRemoteVolume(let uid, let v) = $0 { (uid, v) } else { nil } }
    }
    var disconnects: [(room: String, hangupUserId: UInt, duration: Int64)] {
        compactMap {
            if case .notifyDisconnected(let room, let user, _, let duration) = $0 {
                (room, user, duration)
            } else {
                nil
            }
        }
    }
    var connects: [(room: String, callerId: UInt, selfId: UInt)] {
        compactMap { if case .notifyConnected(let room, let caller, let me) = $0 { (room, caller, me) } else { nil } }
    }
    var hasLeave: Bool { contains { $0.isLeave } }
    var hasJoin: Bool { contains { $0.isJoin } }
    var hasAskCanJoin: Bool { contains { $0.isAskCanJoin } }
    var hasStopTimer: Bool { contains { $0.isStopTimer } }
    var hasStartTimer: Bool { contains { $0.isStartTimer } }
    /// True when nothing but logging happened.
    var onlyLogs: Bool { allSatisfy(\.isLog) }
}

/// What a `fetchRTCToken` action asks for (its provider cannot be compared).
struct TokenFetch: Equatable {
    var callId: String
    var channel: String
    var uid: UInt
}

extension [String: JSONValue] {
    func int(_ key: String) -> Int? { self[key]?.intValue }
    func string(_ key: String) -> String? { self[key]?.stringValue }
}
