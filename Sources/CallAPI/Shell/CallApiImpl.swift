import Foundation

/// The CallAPI endpoint: the shell around ``CallStateMachine`` that performs its actions.
///
/// Inputs (requests, messages, RTC events, timer fires) go through one queue and are handled one at a
/// time, in order, on the thread that brought them unless another thread is already draining the queue.
/// Actions run outside the lock, so listeners may call back into the API; those calls are queued behind
/// the input being handled.
public final class CallApiImpl: CallApiProtocol {
    /// The config behind one reference. It goes into queued inputs and every step; as a struct of three
    /// existentials and a closure, each copy of it was a generic value-witness copy, about 60,000 instructions per
    /// endpoint and call in the calls bench (callgrind; docs/benchmarks.md).
    private final class SharedConfig: Sendable {
        let value: CallConfig

        init(_ value: CallConfig) { self.value = value }
    }

    private struct Pending: Sendable {
        var input: CallInput
        var config: SharedConfig?
        var completion: (@Sendable (CallAPIError?) -> Void)?
    }

    private struct Core: Sendable {
        var machine: CallStateMachine
        var config: SharedConfig?
        var queue: [Pending] = []
        var drain = Drain.idle(spare: [])
        var listeners = ListenerSet()
        var streams: [UUID: AsyncStream<CallStateChange>.Continuation] = [:]
        var timers: [CallTimerID: any CallTimer] = [:]
        /// CallAPI's own listener of the engine's events, while initialized.
        var rtcListener: RTCEventListenerToken?
        /// CallAPI's own listener on the signaling client, from the first prepare until deinitialize (the client
        /// holds it weakly, so it is kept here).
        var signalListener: CallSignalListener?
    }

    /// Whether a thread is draining the queue. Only that thread handles inputs, so one buffer serves every step of
    /// a drain: the machine appends each input's actions to it, and it is emptied, keeping its storage, once they
    /// are performed. Between drains it waits here for the next one (a new buffer per drain was an allocation, and
    /// its growth a copy, for nearly every input).
    private enum Drain {
        case idle(spare: [CallAction])
        case draining
    }

    /// What one handled input needs to perform its actions (the actions themselves are in the drainer's buffer).
    private struct Step {
        var completion: (@Sendable (CallAPIError?) -> Void)?
        /// The endpoint's config, or the one `initialize` brought (which `.attach` makes the endpoint's).
        var config: SharedConfig?
        var listeners: [any CallApiListenerProtocol]
        var streams: [AsyncStream<CallStateChange>.Continuation]
    }

    private let core: Locked<Core>
    /// The bridges of main-actor listeners, which the weakly held listener set cannot keep alive itself.
    let mainActorBridges = Locked<[ObjectIdentifier: MainActorListenerBridge]>([:])
    private static let fallbackClock = SystemCallClock()

    /// This instance's device id, sent with every call message so that a user logged in on several devices
    /// can have a call answered on one of them while the others stop ringing (docs/multi-device.md).
    public let deviceId: String

    /// A new endpoint. `deviceId` names this device among the user's devices; by default a random one is made,
    /// which is what apps want. A given id that is empty or longer than
    /// 64 bytes (what the wire format allows) is replaced by a random one.
    public init(deviceId: String? = nil) {
        let valid = deviceId.flatMap { $0.isEmpty || $0.utf8.count > CallMessage.maxDeviceIdLength ? nil : $0 }
        let deviceId = valid ?? Self.makeDeviceId()
        self.deviceId = deviceId
        core = Locked(Core(machine: CallStateMachine(deviceId: deviceId)))
    }

    /// 16 random hexadecimal digits.
    private static func makeDeviceId() -> String {
        let digits = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The current state.
    public var state: CallStateType { core.withLock { $0.machine.state } }

    /// State changes from now on, for Swift concurrency users. Each access makes a new stream.
    public var stateChanges: AsyncStream<CallStateChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: CallStateChange.self)
        let id = UUID()
        core.withLock { $0.streams[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.core.withLock { _ = $0.streams.removeValue(forKey: id) } }
        return stream
    }

    // MARK: - CallApiProtocol

    public func initialize(config: CallConfig) {
        submit(.initialize(userId: config.userId, reliability: config.reliability), config: SharedConfig(config))
    }

    public func deinitialize(completion: @escaping @Sendable () -> Void) {
        submit(.deinitialize) { _ in completion() }
    }

    public func renewToken(with rtcToken: String) {
        submit(.renewToken(rtcToken))
    }

    public func prepareForCall(prepareConfig: PrepareConfig, completion: (@Sendable ((any Error)?) -> Void)?) {
        submit(.prepare(prepareConfig), completion: completion)
    }

    public func addListener(listener: any CallApiListenerProtocol) {
        core.withLock { $0.listeners.add(listener) }
    }

    public func removeListener(listener: any CallApiListenerProtocol) {
        core.withLock { $0.listeners.remove(listener) }
    }

    public func call(remoteUserId: UInt, completion: (@Sendable ((any Error)?) -> Void)?) {
        call(remoteUserId: remoteUserId, callType: .video, callExtension: [:], completion: completion)
    }

    public func call(
        remoteUserId: UInt, callType: CallType, callExtension: [String: Any],
        completion: (@Sendable ((any Error)?) -> Void)?
    ) {
        guard let ext = JSONValue.object(from: callExtension) else {
            let keys = JSONValue.invalidKeys(in: callExtension).joined(separator: ", ")
            completion?(CallAPIError(.invalidArgument, "callExtension values must be JSON; not: \(keys)"))
            return
        }
        let callId = core.withLock { $0.config?.value.makeCallId() } ?? UUID().uuidString
        call(remoteUserId: remoteUserId, callType: callType, callExtension: ext, callId: callId, completion: completion)
    }

    /// Places a call with a given `callId` instead of a new one: a call the signaling server asked for, whose id
    /// the server has already told the business server (docs/match.md). Otherwise exactly ``call(remoteUserId:
    /// callType:callExtension:completion:)``.
    package func call(
        remoteUserId: UInt, callType: CallType, callExtension: [String: JSONValue], callId: String,
        completion: (@Sendable ((any Error)?) -> Void)?
    ) {
        submit(
            .call(
                remoteUserId: remoteUserId, type: callType, extension: callExtension.isEmpty ? nil : callExtension,
                callId: callId),
            completion: completion)
    }

    public func cancelCall(completion: (@Sendable ((any Error)?) -> Void)?) {
        submit(.cancel, completion: completion)
    }

    public func accept(remoteUserId: UInt, completion: (@Sendable ((any Error)?) -> Void)?) {
        submit(.accept(remoteUserId: remoteUserId), completion: completion)
    }

    public func reject(remoteUserId: UInt, reason: String?, completion: (@Sendable ((any Error)?) -> Void)?) {
        submit(.reject(remoteUserId: remoteUserId, reason: reason), completion: completion)
    }

    public func hangup(remoteUserId: UInt, reason: String?, completion: (@Sendable ((any Error)?) -> Void)?) {
        submit(.hangup(remoteUserId: remoteUserId, reason: reason), completion: completion)
    }

    public func getCallId() -> String { core.withLock { $0.machine.callId } }

    /// The current call's RTC channel, or `""` outside a call. Known from ``CallEvent/joinRTCStart`` on:
    /// an app listens to the call's channel by adding, at that event,
    /// `rtcEngine.addEventListener(channel: api.getRoomId()) { ... }` (see ``CallRTCEngine``).
    public func getRoomId() -> String { core.withLock { $0.machine.call?.room ?? "" } }

    // MARK: - What the signaling client delivers (through CallSignalListener)

    func received(_ message: String, from sender: SignalSender?) {
        submit(.received(text: message, sender: sender))
    }

    func signalDebugInfo(message: String, logLevel: Int) {
        let level = CallLogLevel(rawValue: logLevel) ?? .normal
        for listener in core.withLock({ $0.listeners.alive }) {
            listener.callDebugInfo(message: "[signal] \(message)", logLevel: level)
        }
    }

    // MARK: - The queue

    private func submit(_ input: CallInput, completion: (@Sendable ((any Error)?) -> Void)?) {
        submit(input, config: nil) { (error: CallAPIError?) in completion?(error) }
    }

    private func submit(
        _ input: CallInput, config: SharedConfig? = nil, completion: (@Sendable (CallAPIError?) -> Void)? = nil
    ) {
        let buffer = core.withLock { core -> [CallAction]? in
            core.queue.append(Pending(input: input, config: config, completion: completion))
            guard case .idle(let spare) = core.drain else { return nil }
            core.drain = .draining
            return spare
        }
        guard var actions = buffer else { return }
        actions.reserveCapacity(16)
        while let step = nextStep(into: &actions) {
            for action in actions { perform(action, step) }
            actions.removeAll(keepingCapacity: true)
        }
    }

    private func nextStep(into actions: inout [CallAction]) -> Step? {
        core.withLock { core -> Step? in
            guard !core.queue.isEmpty else {
                // The buffer moves back for the next drain; the drainer's reference goes, so it stays unique.
                core.drain = .idle(spare: actions)
                actions = []
                return nil
            }
            let next = core.queue.removeFirst()
            let config = core.config ?? next.config
            let clock = config?.value.clock ?? Self.fallbackClock
            core.machine.handle(next.input, now: clock.nowMillis(), into: &actions)
            if core.machine.wantsPreJoin, let callId = config?.value.makeCallId() {
                core.queue.append(Pending(input: .preJoin(callId: callId)))
            }
            return Step(
                completion: next.completion, config: config,
                listeners: core.listeners.alive, streams: Array(core.streams.values))
        }
    }

    // MARK: - Performing actions

    private func perform(_ action: CallAction, _ step: Step) {
        let engine = step.config?.value.rtcEngine
        switch action {
        case .attach:
            guard let config = step.config else { return }
            attach(to: config)
        case .listen:
            guard let signal = step.config?.value.signalClient else { return }
            let listener = CallSignalListener(api: self)
            core.withLock { $0.signalListener = listener }
            signal.addListener(listener: listener)
        case .detach:
            guard let config = step.config else { return }
            detach(from: config)
        case .send(let message, let to, let completesRequest):
            guard let signal = step.config?.value.signalClient else { return }
            signal.sendMessage(userId: String(to), message: message.encoded()) { [weak self] error in
                let failure = error.map(SendFailure.init)
                if completesRequest {
                    step.completion?(
                        failure.map {
                            CallAPIError(.sendFailed, "could not send \(message.action) to user \(to): \($0.message)")
                        })
                }
                self?.submit(.sendFinished(message, to: to, error: failure))
            }
        case .completeRequest(let error):
            step.completion?(error)
        case .joinRTC(let join), .publishInJoinedRTC(let join):
            if join.media.publishCamera {
                engine?.setLocalCanvas(join.localView?.view)
                engine?.startPreview()
            }
            if let remote = join.remoteView { engine?.setRemoteCanvas(remote.view, uid: join.remoteUid) }
            if case .joinRTC = action {
                engine?.joinChannel(join.channel, token: join.token, uid: join.uid, media: join.media)
            } else {
                engine?.updateMedia(join.media)
            }
        case .fetchRTCToken(let callId, let channel, let uid, let source):
            Task { [weak self] in
                let outcome: Result<String, CallAPIError>
                do {
                    outcome = .success(try await source.provider(channel, uid))
                } catch {
                    outcome = .failure(CallAPIError(.rtcTokenUnavailable, "the token provider failed: \(error)"))
                }
                self?.submit(.rtcTokenFetched(callId: callId, outcome: outcome))
            }
        case .leaveRTC(let remoteUid):
            engine?.stopPreview()
            engine?.setLocalCanvas(nil)
            if let remoteUid { engine?.setRemoteCanvas(nil, uid: remoteUid) }
            engine?.leaveChannel()
        case .setRemoteVolume(let uid, let volume):
            engine?.setRemotePlaybackVolume(volume, uid: uid)
        case .renewRTCToken(let token):
            engine?.renewToken(token)
        case .startTimer(let id, let millis):
            let clock = step.config?.value.clock ?? Self.fallbackClock
            let timer = clock.schedule(afterMillis: millis) { [weak self] in self?.submit(.timerFired(id)) }
            core.withLock { $0.timers.updateValue(timer, forKey: id) }?.cancel()
        case .stopTimer(let id):
            core.withLock { $0.timers.removeValue(forKey: id) }?.cancel()
        case .askCanJoinOnCalling(let callId, let info):
            var allowed = true
            if !step.listeners.isEmpty {
                let anyInfo = info.dictionary.eventInfoForListeners
                allowed = step.listeners.contains { $0.canJoinRtcOnCalling(eventInfo: anyInfo) }
            }
            submit(.earlyJoinDecided(callId: callId, allowed: allowed))
        case .notifyState(let change):
            // The info is built here, once, and only when someone listens (streams build it when they read it).
            if !step.listeners.isEmpty {
                let info = change.eventInfo.eventInfoForListeners
                for listener in step.listeners {
                    listener.onCallStateChanged(
                        with: change.state, stateReason: change.reason, eventReason: change.eventReason, eventInfo: info
                    )
                }
            }
            for stream in step.streams { stream.yield(change) }
        case .notifyEvent(let event, let reason):
            for listener in step.listeners { listener.onCallEventChanged(with: event, eventReason: reason) }
        case .notifyError(let event, let type, let code, let message):
            for listener in step.listeners {
                listener.onCallError(with: event, errorType: type, errorCode: code, message: message)
            }
        case .notifyConnected(let room, let callerId, let selfId):
            let now = engine?.ntpWallTimeMillis() ?? 0
            for listener in step.listeners {
                listener.onCallConnected(roomId: room, callUserId: callerId, currentUserId: selfId, timestamp: now)
            }
        case .notifyDisconnected(let room, let hangupUserId, let selfId, let duration):
            let now = engine?.ntpWallTimeMillis() ?? 0
            for listener in step.listeners {
                listener.onCallDisconnected(
                    roomId: room, hangupUserId: hangupUserId, currentUserId: selfId, timestamp: now,
                    duration: UInt64(clamping: duration))
            }
        case .notifyTokenWillExpire:
            for listener in step.listeners { listener.tokenPrivilegeWillExpire() }
        case .log(let level, let message):
            for listener in step.listeners { listener.callDebugInfo(message: message, logLevel: level) }
        }
    }

    private func attach(to config: SharedConfig) {
        let token = config.value.rtcEngine.addEventListener { [weak self] event in self?.submit(.rtc(event)) }
        core.withLock {
            $0.config = config
            $0.rtcListener = token
        }
    }

    private func detach(from shared: SharedConfig) {
        let config = shared.value
        let token = core.withLock { core in
            defer { core.rtcListener = nil }
            return core.rtcListener
        }
        if let token { config.rtcEngine.removeEventListener(token) }
        let signalListener = core.withLock { core in
            defer { core.signalListener = nil }
            return core.signalListener
        }
        if let signalListener { config.signalClient.removeListener(listener: signalListener) }
        let timers = core.withLock { core in
            defer {
                core.config = nil
                core.timers = [:]
            }
            return Array(core.timers.values)
        }
        timers.forEach { $0.cancel() }
    }
}

extension SendFailure {
    /// What a signaling client's error says: a CallAPI error's code, or any other error's `NSError` code (an
    /// adapter's `CustomNSError` number) and its description.
    package init(_ error: any Error) {
        if let error = error as? CallAPIError {
            self.init(code: error.code.rawValue, message: error.message)
        } else {
            self.init(code: (error as NSError).code, message: "\(error)")
        }
    }
}
