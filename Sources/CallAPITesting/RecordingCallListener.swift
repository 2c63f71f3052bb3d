import CallAPI

/// A `CallApiListenerProtocol` that records everything it is told, for tests of call screens.
public final class RecordingCallListener: CallApiListenerProtocol {
    /// Something the listener was told, in order.
    public enum Record: Sendable, Equatable {
        case state(CallStateType, CallStateReason)
        case event(CallEvent)
        case error(CallErrorEvent, CallErrorCodeType, code: Int)
        case connected(roomId: String, callUserId: UInt, currentUserId: UInt)
        case disconnected(roomId: String, hangupUserId: UInt, currentUserId: UInt, duration: UInt64)
        case tokenWillExpire
    }

    /// A state change with its event info, as JSON.
    public struct StateRecord: Sendable, Equatable {
        public var state: CallStateType
        public var reason: CallStateReason
        public var eventReason: String
        public var eventInfo: [String: JSONValue]
    }

    private struct State: Sendable {
        var records: [Record] = []
        var states: [StateRecord] = []
        var eventReasons: [(CallEvent, String?)] = []
        var logs: [(CallLogLevel, String)] = []
        var errorMessages: [String] = []
        var canJoinRtcOnCalling = true
    }

    private let state = Locked(State())

    public init(canJoinRtcOnCalling: Bool = true) {
        state.withLock { $0.canJoinRtcOnCalling = canJoinRtcOnCalling }
    }

    /// Everything, in order.
    public var records: [Record] { state.withLock { $0.records } }
    /// The state changes with their info.
    public var stateRecords: [StateRecord] { state.withLock { $0.states } }
    /// Just the states and reasons.
    public var states: [Record] { records.filter { if case .state = $0 { true } else { false } } }
    /// Just the events.
    public var events: [CallEvent] { records.compactMap { if case .event(let e) = $0 { e } else { nil } } }
    /// The reason text given with each event.
    public func reason(of event: CallEvent) -> String? {
        state.withLock { $0.eventReasons.last { $0.0 == event }?.1 ?? nil }
    }
    public var lastState: StateRecord? { stateRecords.last }
    public var logs: [(level: CallLogLevel, message: String)] { state.withLock { $0.logs.map { ($0.0, $0.1) } } }
    public var errorMessages: [String] { state.withLock { $0.errorMessages } }

    /// Forgets what was recorded.
    public func reset() {
        state.withLock { state in
            state.records = []
            state.states = []
            state.eventReasons = []
            state.logs = []
            state.errorMessages = []
        }
    }

    public func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        let info = JSONValue.object(from: eventInfo) ?? [:]
        self.state.withLock {
            $0.records.append(.state(state, stateReason))
            $0.states.append(StateRecord(state: state, reason: stateReason, eventReason: eventReason, eventInfo: info))
        }
    }

    public func onCallEventChanged(with event: CallEvent, eventReason: String?) {
        state.withLock {
            $0.records.append(.event(event))
            $0.eventReasons.append((event, eventReason))
        }
    }

    public func onCallError(
        with errorEvent: CallErrorEvent, errorType: CallErrorCodeType, errorCode: Int, message: String?
    ) {
        state.withLock {
            $0.records.append(.error(errorEvent, errorType, code: errorCode))
            $0.errorMessages.append(message ?? "")
        }
    }

    public func onCallConnected(roomId: String, callUserId: UInt, currentUserId: UInt, timestamp: UInt64) {
        state.withLock {
            $0.records.append(.connected(roomId: roomId, callUserId: callUserId, currentUserId: currentUserId))
        }
    }

    public func onCallDisconnected(
        roomId: String, hangupUserId: UInt, currentUserId: UInt, timestamp: UInt64, duration: UInt64
    ) {
        state.withLock {
            $0.records.append(
                .disconnected(
                    roomId: roomId, hangupUserId: hangupUserId, currentUserId: currentUserId, duration: duration))
        }
    }

    public func canJoinRtcOnCalling(eventInfo: [String: Any]) -> Bool { state.withLock { $0.canJoinRtcOnCalling } }

    public func tokenPrivilegeWillExpire() { state.withLock { $0.records.append(.tokenWillExpire) } }

    public func callDebugInfo(message: String, logLevel: CallLogLevel) {
        state.withLock { $0.logs.append((logLevel, message)) }
    }
}
