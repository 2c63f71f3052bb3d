/// The call logic of one endpoint: a value that takes a ``CallInput`` and returns the ``CallAction``s to
/// perform, as `docs/spec/call-behaviour.md` describes, case by case.
///
/// Pure and synchronous: no I/O, clocks, timers or threads. Time comes in with each input; identifiers
/// that need randomness (the `callId`) come in with the request. `CallApiImpl` is the shell that performs
/// the actions and feeds back their outcomes.
///
/// Everything the endpoint is doing lives in one ``Phase`` whose cases own their data; the public
/// ``CallStateType`` is computed from it. Handlers append their actions in the order they are to be
/// performed and never edit an action once appended.
package struct CallStateMachine: Sendable {
    /// How much older than the ring timeout a call message may look before it is treated as stale, when its
    /// age is judged by the sender's clock (phones' clocks drift) or by the channel's (servers' drift less).
    package static let senderClockSkewAllowanceMillis: Int64 = 5_000
    package static let channelClockSkewAllowanceMillis: Int64 = 1_000

    /// What the endpoint is doing, with everything that only exists while it does it.
    package internal(set) var phase = Phase.uninitialized
    /// The acknowledgement and retry layer.
    package internal(set) var delivery = DeliveryMachine()
    // These two outlive a login: a re-initialized endpoint never reuses a message id and still recognises a
    // repeat of what it handled before.
    private var lastMessageId = 0
    private var recent = RecentMessages()
    /// This device among the user's devices, stamped on every message sent (docs/multi-device.md); nil sends
    /// messages without it, as the existing clients do.
    package let deviceId: String?

    package init(deviceId: String? = nil) {
        self.deviceId = deviceId
    }

    /// Handles one input at wall time `now` (milliseconds since 1970) and returns what to do.
    package mutating func handle(_ input: CallInput, now: Int64) -> [CallAction] {
        var actions: [CallAction] = []
        handle(input, now: now, into: &actions)
        return actions
    }

    /// Handles one input at wall time `now` and appends what to do to `actions`, leaving what is already there
    /// as it is: a caller that handles many inputs reuses one buffer instead of a new array per input.
    package mutating func handle(_ input: CallInput, now: Int64, into actions: inout [CallAction]) {
        switch input {
        case .initialize(let userId, let reliability):
            initialize(userId: userId, reliability: reliability, into: &actions)
        case .deinitialize: deinitialize(now: now, into: &actions)
        case .prepare(let config): prepare(config, into: &actions)
        case .call(let remoteUserId, let type, let ext, let callId):
            placeCall(to: remoteUserId, type: type, extension: ext, callId: callId, now: now, into: &actions)
        case .cancel: cancel(now: now, into: &actions)
        case .accept(let remoteUserId): accept(from: remoteUserId, now: now, into: &actions)
        case .reject(let remoteUserId, let reason): reject(remoteUserId, reason: reason, now: now, into: &actions)
        case .hangup(let remoteUserId, let reason): hangup(remoteUserId, reason: reason, now: now, into: &actions)
        case .renewToken(let token): renewToken(token, into: &actions)
        case .received(let text, let sender): receive(text, sender: sender, now: now, into: &actions)
        case .sendFinished(let message, let to, let error):
            sendFinished(message, to: to, error: error, now: now, into: &actions)
        case .rtc(let event): handleRTC(event, now: now, into: &actions)
        case .timerFired(let timer): timerFired(timer, now: now, into: &actions)
        case .earlyJoinDecided(let callId, let allowed): earlyJoinDecided(callId, allowed: allowed, into: &actions)
        case .rtcTokenFetched(let callId, let outcome): rtcTokenFetched(callId, outcome, now: now, into: &actions)
        case .preJoin(let callId): preJoin(callId: callId, into: &actions)
        }
    }

    // MARK: - Queries

    /// The state the API reports, computed from the phase.
    package var state: CallStateType {
        switch phase {
        case .uninitialized, .initialized: .idle
        case .prepared: .prepared
        case .inCall(_, let call): call.stage.state
        case .failed: .failed
        }
    }

    /// The current call, if any.
    package var call: Call? {
        if case .inCall(_, let call) = phase { call } else { nil }
    }

    /// The current call's id, or `""` outside a call (as `getCallId()` answers).
    package var callId: String {
        if case .inCall(_, let call) = phase { call.id } else { "" }
    }

    /// Whether the current call is with `user`; unlike `call?.peer`, without copying the call out.
    func isInCall(with user: UInt) -> Bool {
        phase.readCall { _, call in call.peer == user } ?? false
    }

    /// Whether the endpoint is prepared (in a call, or failed, included): what `endpoint != nil` says, without
    /// copying the phase's data out.
    var hasEndpoint: Bool {
        switch phase {
        case .uninitialized, .initialized: false
        case .prepared, .inCall, .failed: true
        }
    }

    /// This endpoint's user, once initialized.
    package var userId: UInt? {
        if case .initialized(let userId) = phase { return userId }
        return endpoint?.userId
    }

    /// The prepare config, once prepared.
    package var prepareConfig: PrepareConfig? { endpoint?.config }

    /// The user and prepare config, once prepared.
    var endpoint: Endpoint? { Self.endpoint(of: phase) }

    /// The endpoint of `phase`, matched where it is: taking it from a copy of the phase copied the whole call too.
    private static func endpoint(of phase: borrowing Phase) -> Endpoint? {
        switch phase {
        case .uninitialized, .initialized: nil
        case .prepared(let endpoint, _): copy endpoint
        case .inCall(let endpoint, _): copy endpoint
        case .failed(let endpoint): copy endpoint
        }
    }

    /// The reliability settings given at initialize.
    package var reliability: CallReliability { delivery.settings }

    // MARK: - Building blocks shared by the input handlers

    /// A new outgoing message from `endpoint`, stamped with the next message id.
    mutating func message(
        _ action: MessageAction, callId: String, from endpoint: Endpoint, now: Int64,
        configure: (inout CallMessage) -> Void = { _ in }
    ) -> CallMessage {
        lastMessageId += 1
        var message = CallMessage(
            action: action, timestamp: now, messageId: lastMessageId, fromUserId: endpoint.userId, callId: callId,
            fromUserExtension: action.isCallFlow ? endpoint.config.userExtensionJSON : nil,
            reliable: delivery.settings.acknowledges)
        message.deviceId = deviceId
        configure(&message)
        return message
    }

    /// Sends `message` and, when the peer may acknowledge it, starts retrying it until it does.
    mutating func send(
        _ message: CallMessage, to peer: UInt, completesRequest: Bool = false, now: Int64,
        into actions: inout [CallAction]
    ) {
        actions.append(.send(message, to: peer, completesRequest: completesRequest))
        delivery.sent(message, to: peer, now: now, into: &actions)
    }

    /// A refused request: a warning, the `stateMismatch` event when the state was wrong, and the error.
    func refuse(_ what: String, code: CallAPIError.Code = .stateMismatch, into actions: inout [CallAction]) {
        let message = "\(what) (state: \(state))"
        actions.append(.log(.warning, message))
        if code == .stateMismatch { actions.append(.notifyEvent(.stateMismatch, reason: message)) }
        actions.append(.completeRequest(CallAPIError(code, message)))
    }

    /// Seen (and remembers) a message: a repeat is handled once.
    mutating func isRepeat(_ message: CallMessage, sender: UInt) -> Bool {
        recent.isRepeat(message, sender: sender)
    }
}
