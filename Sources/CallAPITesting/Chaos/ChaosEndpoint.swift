import CallAPI

/// One device of a user of a chaos scenario: its current API instance (replaced when its process "crashes"
/// and restarts) and what its listener saw. A user has one to three devices.
final class ChaosEndpoint: Sendable {
    let userId: UInt
    /// Which of the user's devices this is (0: the first).
    let device: Int
    /// The device's signaling client and RTC engine, kept across restarts.
    let signal: InMemorySignalClient
    let engine: SimulatedRTCEngine
    private let state: Locked<State>

    private struct State: Sendable {
        var api: CallApiImpl?
        var listener: ChaosListener?
        var initialized = false
        var crashed = false
    }

    init(userId: UInt, device: Int, signal: InMemorySignalClient, engine: SimulatedRTCEngine) {
        self.userId = userId
        self.device = device
        self.signal = signal
        self.engine = engine
        state = Locked(State())
    }

    /// "user 2" for a user's only device, "user 2/b" for its second.
    var name: String {
        device == 0 ? "user \(userId)" : "user \(userId)/\(Character(UnicodeScalar(UInt8(97 + device))))"
    }

    var api: CallApiImpl? { state.withLock { $0.api } }
    var listener: ChaosListener? { state.withLock { $0.listener } }
    var isInitialized: Bool { state.withLock { $0.initialized } }
    var isCrashed: Bool { state.withLock { $0.crashed } }

    func start(api: CallApiImpl, listener: ChaosListener) {
        state.withLock { $0 = State(api: api, listener: listener, initialized: true, crashed: false) }
    }

    func setInitialized(_ value: Bool) { state.withLock { $0.initialized = value } }

    /// The process dies: the API instance is dropped without deinitialize.
    func crash() {
        state.withLock { $0 = State(api: nil, listener: nil, initialized: false, crashed: true) }
    }
}

/// Watches one API instance: its role and peer, when it entered its state, the room it connected in,
/// and any callback after its deinitialize completed.
final class ChaosListener: CallApiListenerProtocol {
    struct Snapshot: Sendable {
        var state: CallStateType = .idle
        /// When the current call started ringing here (the ring timer's start).
        var ringingSince: Int64 = 0
        var isCaller = false
        var peer: UInt?
        var room: String?
        var closed = false
        var connections = 0
        var callId: String?
        /// The caller: the device of the peer user whose accept it took (from the accept's event info).
        var peerDevice: String?
    }

    private let snapshot = Locked(Snapshot())
    private let label: String
    private let clock: any CallClock
    private let violations: Locked<[String]>
    /// Writes a line into the scenario's trace.
    private let log: @Sendable (String) -> Void

    init(
        label: String, clock: any CallClock, violations: Locked<[String]>,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.label = label
        self.clock = clock
        self.violations = violations
        self.log = log
    }

    var current: Snapshot { snapshot.withLock { $0 } }

    /// Deinitialize completed: from now on any callback is a violation.
    func close() { snapshot.withLock { $0.closed = true } }

    private func checkOpen(_ what: String) {
        if snapshot.withLock({ $0.closed }) {
            violations.withLock { $0.append("\(label): \(what) after deinitialize completed") }
        }
    }

    func callDebugInfo(message: String, logLevel: CallLogLevel) {
        log("    [\(label)] \(message)")
    }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        checkOpen("onCallStateChanged(\(state))")
        let now = clock.nowMillis()
        let callId = (eventInfo[kCallId] as? String).map { " call \($0.prefix(8))" } ?? ""
        log("  \(label) is \(state) (\(stateReason))\(callId)")
        snapshot.withLock { s in
            if state == .calling { s.ringingSince = now }
            s.state = state
            switch stateReason {
            case .localVideoCall, .localAudioCall:
                s.isCaller = true
                s.peer = eventInfo[kRemoteUserId] as? UInt
            case .remoteVideoCall, .remoteAudioCall:
                s.isCaller = false
                s.peer = eventInfo[kFromUserId] as? UInt
            case .remoteAccepted:
                s.peerDevice = eventInfo["deviceId"] as? String
            case .remoteRejected, .remoteCancelled, .remoteCallingTimeout, .remoteHangup, .remoteCallBusy:
                // Only the device the call is with may end it.
                let from = eventInfo["deviceId"] as? String
                if let bound = s.peerDevice, from != bound {
                    violations.withLock {
                        $0.append(
                            "\(label): \(stateReason) from device \(from ?? "?") ended a call answered on \(bound)")
                    }
                }
            default:
                break
            }
            if let callId = eventInfo[kCallId] as? String { s.callId = callId }
            if state == .connected {
                s.room = eventInfo[kFromRoomId] as? String
                s.connections += 1
            }
            if !state.isInCall {
                s.peer = nil
                s.room = nil
                s.callId = nil
                s.peerDevice = nil
            }
        }
    }

    func onCallEventChanged(with event: CallEvent, eventReason: String?) { checkOpen("event \(event)") }

    func onCallError(with errorEvent: CallErrorEvent, errorType: CallErrorCodeType, errorCode: Int, message: String?) {
        checkOpen("error \(errorEvent)")
    }
}
