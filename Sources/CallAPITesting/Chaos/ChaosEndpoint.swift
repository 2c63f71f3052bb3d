import CallAPI

/// One user of a chaos scenario: its current API instance (replaced when its process "crashes" and
/// restarts) and what its listener saw.
final class ChaosEndpoint: Sendable {
    let userId: UInt
    private let state: Locked<State>

    private struct State: Sendable {
        var api: CallApiImpl?
        var listener: ChaosListener?
        var initialized = false
        var crashed = false
    }

    init(userId: UInt) {
        self.userId = userId
        state = Locked(State())
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
    }

    private let snapshot = Locked(Snapshot())
    private let label: String
    private let clock: any CallClock
    private let violations: Locked<[String]>

    init(label: String, clock: any CallClock, violations: Locked<[String]>) {
        self.label = label
        self.clock = clock
        self.violations = violations
    }

    var current: Snapshot { snapshot.withLock { $0 } }

    /// Deinitialize completed: from now on any callback is a violation.
    func close() { snapshot.withLock { $0.closed = true } }

    private func checkOpen(_ what: String) {
        if snapshot.withLock({ $0.closed }) {
            violations.withLock { $0.append("\(label): \(what) after deinitialize completed") }
        }
    }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        checkOpen("onCallStateChanged(\(state))")
        let now = clock.nowMillis()
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
            default:
                break
            }
            if state == .connected {
                s.room = eventInfo[kFromRoomId] as? String
                s.connections += 1
            }
            if !state.isInCall {
                s.peer = nil
                s.room = nil
            }
        }
    }

    func onCallEventChanged(with event: CallEvent, eventReason: String?) { checkOpen("event \(event)") }

    func onCallError(with errorEvent: CallErrorEvent, errorType: CallErrorCodeType, errorCode: Int, message: String?) {
        checkOpen("error \(errorEvent)")
    }
}
