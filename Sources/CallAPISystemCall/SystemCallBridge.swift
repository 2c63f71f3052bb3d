import CallAPI
import Foundation

/// Connects a ``CallApiImpl`` to the system call screen (CallKit on iOS): pushed and ringing calls appear on
/// the system screen, the user's answer, decline, hang-up and mute there act on the call, and every ending is
/// reported with the reason the system shows.
///
/// Create one per ``CallApiImpl`` and keep it alive (the API holds its listeners weakly). Feed it every VoIP
/// push with ``pushReceived(payload:)``, in the push handler: it reports the call to the system before it
/// returns, as the platform requires, even when the payload is unreadable or the call is already over.
///
/// ```swift
/// let bridge = SystemCallBridge(callAPI: api, engine: engine, screen: CallKitSystemCallScreen())
/// ```
public final class SystemCallBridge: CallApiListenerProtocol {
    private struct Pending: Sendable {
        var input: SystemCallBridgeInput
        /// Signalled once the input's actions were performed (pushes wait for their report).
        var done: DispatchSemaphore?
    }

    private struct Core: Sendable {
        var machine: SystemCallBridgeMachine
        var queue: [Pending] = []
        var draining = false
        var timers: [SystemCallTimer: any CallTimer] = [:]
    }

    private let core: Locked<Core>
    private let callAPI: any CallApiProtocol
    private let engine: any CallRTCEngine
    private let screen: any SystemCallScreen
    private let clock: any CallClock
    private let log: @Sendable (String) -> Void

    /// - Parameters:
    ///   - callAPI: the endpoint whose calls are bridged; the bridge adds itself as its listener.
    ///   - engine: the media engine of `callAPI`, for muting the microphone.
    ///   - screen: the system call screen.
    ///   - clock: the clock of the bridge's timers (`callAPI`'s clock).
    ///   - log: diagnostic text.
    public init(
        callAPI: any CallApiProtocol, engine: any CallRTCEngine, screen: any SystemCallScreen,
        clock: any CallClock = SystemCallClock(), configuration: SystemCallBridgeConfiguration = .init(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        core = Locked(Core(machine: SystemCallBridgeMachine(configuration: configuration)))
        self.callAPI = callAPI
        self.engine = engine
        self.screen = screen
        self.clock = clock
        self.log = log
        callAPI.addListener(listener: self)
    }

    /// The system's identifier of the call the bridge follows, if any.
    public var currentCallUUID: UUID? { core.withLock { $0.machine.call?.uuid } }

    // MARK: - Pushes

    /// A VoIP push arrived (PushKit's `dictionaryRepresentation`, or an FCM message's data). Reports the call
    /// to the system before it returns: a readable call ringing until its deadline, or, for an unreadable
    /// payload or a call already over, a call ended at once.
    public func pushReceived(payload: [AnyHashable: Any]) {
        do {
            pushReceived(try SystemCallPush(payload: payload))
        } catch {
            submitAndWait(.unreadablePushReceived(rawPayload: String(describing: payload), problem: "\(error)"))
        }
    }

    /// A VoIP push for `push` arrived. Reports the call to the system before it returns.
    public func pushReceived(_ push: SystemCallPush) {
        submitAndWait(.pushReceived(push))
    }

    /// The server says a pushed call was withdrawn (its tombstone): the system screen stops showing it, or
    /// shows it ended as soon as its push comes.
    public func pushedCallWithdrawn(callId: String, reason: SystemCallWithdrawal) {
        submit(.pushedCallWithdrawn(callId: callId, reason))
    }

    // MARK: - The system screen's actions

    /// The user answered the call `uuid` on the system screen. Completed when the call is connecting.
    public func systemAnswered(uuid: UUID) { submit(.system(.answer, uuid: uuid)) }

    /// The user declined or ended the call `uuid` on the system screen.
    public func systemEnded(uuid: UUID) { submit(.system(.end, uuid: uuid)) }

    /// The user muted or unmuted the call `uuid` on the system screen.
    public func systemSetMuted(uuid: UUID, muted: Bool) { submit(.system(.setMuted(muted), uuid: uuid)) }

    // MARK: - CallApiListenerProtocol

    public func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        guard let update = CallAPIUpdate(state: state, reason: stateReason, eventInfo: eventInfo) else { return }
        submit(.callAPI(update))
    }

    // MARK: - The queue

    /// Inputs are handled one at a time, in order, like CallAPI's: an input that arrives while another thread
    /// (or an action being performed) is handling one is queued behind it.
    private func submit(_ input: SystemCallBridgeInput) {
        enqueue(Pending(input: input, done: nil))
    }

    /// Submits `input` and returns only once its actions were performed, whichever thread performs them.
    /// Never called from inside an action (pushes come from the push handler), so it cannot wait on itself.
    private func submitAndWait(_ input: SystemCallBridgeInput) {
        let done = DispatchSemaphore(value: 0)
        enqueue(Pending(input: input, done: done))
        done.wait()
    }

    private func enqueue(_ pending: Pending) {
        let drain = core.withLock { core -> Bool in
            core.queue.append(pending)
            guard !core.draining else { return false }
            core.draining = true
            return true
        }
        guard drain else { return }
        while let (actions, done) = nextStep() {
            actions.forEach(perform)
            done?.signal()
        }
    }

    private func nextStep() -> ([SystemCallBridgeAction], DispatchSemaphore?)? {
        let now = clock.nowMillis()
        return core.withLock { core in
            guard !core.queue.isEmpty else {
                core.draining = false
                return nil
            }
            let next = core.queue.removeFirst()
            return (core.machine.handle(next.input, now: now), next.done)
        }
    }

    // MARK: - Performing actions

    private func perform(_ action: SystemCallBridgeAction) {
        switch action {
        case .reportIncoming(let report): screen.reportIncomingCall(report)
        case .reportOutgoingStarted(let report): screen.reportOutgoingCallStarted(report)
        case .reportOutgoingConnecting(let uuid): screen.reportOutgoingCallConnecting(uuid: uuid)
        case .reportOutgoingConnected(let uuid): screen.reportOutgoingCallConnected(uuid: uuid)
        case .reportEnded(let uuid, let reason): screen.reportCallEnded(uuid: uuid, reason: reason)
        case .requestEnd(let uuid): screen.requestEndCall(uuid: uuid)
        case .requestAnswer(let uuid): screen.requestAnswerCall(uuid: uuid)
        case .complete(let kind, let uuid, let fulfilled):
            screen.completeAction(kind, uuid: uuid, fulfilled: fulfilled)
        case .accept(let remoteUserId):
            callAPI.accept(remoteUserId: remoteUserId, completion: report("accept"))
        case .reject(let remoteUserId):
            callAPI.reject(remoteUserId: remoteUserId, reason: nil, completion: report("reject"))
        case .cancel:
            callAPI.cancelCall(completion: report("cancel"))
        case .hangup(let remoteUserId):
            callAPI.hangup(remoteUserId: remoteUserId, reason: nil, completion: report("hangup"))
        case .setMicrophoneMuted(let muted, let video):
            engine.updateMedia(
                RTCMediaOptions(
                    publishMicrophone: !muted, publishCamera: video, subscribeAudio: true, subscribeVideo: true))
        case .startTimer(let timer, let millis):
            let scheduled = clock.schedule(afterMillis: millis) { [weak self] in self?.submit(.timerFired(timer)) }
            core.withLock { $0.timers.updateValue(scheduled, forKey: timer) }?.cancel()
        case .stopTimer(let timer):
            core.withLock { $0.timers.removeValue(forKey: timer) }?.cancel()
        case .log(let message):
            log(message)
        }
    }

    private func report(_ request: String) -> @Sendable ((any Error)?) -> Void {
        { [log] error in
            if let error { log("\(request) from the system screen failed: \(error)") }
        }
    }
}
