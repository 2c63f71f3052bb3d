/// A ``CallApiListenerProtocol`` listener that hands each callback to a ``CallApiMainActorListener`` on the main
/// actor. One task drains the callbacks in order, so the listener sees them in the order the API reported them
/// (tasks started one per callback could run out of order).
final class MainActorListenerBridge: CallApiListenerProtocol {
    /// One callback, in a form that can cross to the main actor.
    private enum Callback: Sendable {
        case stateChanged(CallStateType, CallStateReason, eventReason: String, eventInfo: [String: JSONValue])
        case event(CallEvent, eventReason: String?)
        case error(CallErrorEvent, CallErrorCodeType, code: Int, message: String?)
        case connected(roomId: String, callUserId: UInt, currentUserId: UInt, timestamp: UInt64)
        case disconnected(roomId: String, hangupUserId: UInt, currentUserId: UInt, timestamp: UInt64, duration: UInt64)
        case tokenWillExpire
        case debug(message: String, level: CallLogLevel)

        @MainActor func deliver(to listener: any CallApiMainActorListener) {
            switch self {
            case .stateChanged(let state, let reason, let eventReason, let info):
                listener.onCallStateChanged(
                    with: state, stateReason: reason, eventReason: eventReason, eventInfo: info.eventInfoForListeners)
            case .event(let event, let reason):
                listener.onCallEventChanged(with: event, eventReason: reason)
            case .error(let event, let type, let code, let message):
                listener.onCallError(with: event, errorType: type, errorCode: code, message: message)
            case .connected(let roomId, let caller, let me, let timestamp):
                listener.onCallConnected(roomId: roomId, callUserId: caller, currentUserId: me, timestamp: timestamp)
            case .disconnected(let roomId, let hangupUser, let me, let timestamp, let duration):
                listener.onCallDisconnected(
                    roomId: roomId, hangupUserId: hangupUser, currentUserId: me, timestamp: timestamp,
                    duration: duration)
            case .tokenWillExpire:
                listener.tokenPrivilegeWillExpire()
            case .debug(let message, let level):
                listener.callDebugInfo(message: message, logLevel: level)
            }
        }
    }

    private weak let listener: (any CallApiMainActorListener)?
    private let callbacks: AsyncStream<Callback>.Continuation

    /// The listener this bridge delivers to (`nil` once it is gone).
    var target: (any CallApiMainActorListener)? { listener }

    init(_ listener: any CallApiMainActorListener) {
        self.listener = listener
        let (stream, callbacks) = AsyncStream.makeStream(of: Callback.self)
        self.callbacks = callbacks
        Task { @MainActor [weak listener] in
            for await callback in stream {
                guard let listener else { return }
                callback.deliver(to: listener)
            }
        }
    }

    deinit { callbacks.finish() }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        // Event info holds JSON values only (the API builds it from them), so nothing is lost on the way.
        let info = JSONValue.object(from: eventInfo) ?? [:]
        callbacks.yield(.stateChanged(state, stateReason, eventReason: eventReason, eventInfo: info))
    }

    func onCallEventChanged(with event: CallEvent, eventReason: String?) {
        callbacks.yield(.event(event, eventReason: eventReason))
    }

    func onCallError(with errorEvent: CallErrorEvent, errorType: CallErrorCodeType, errorCode: Int, message: String?) {
        callbacks.yield(.error(errorEvent, errorType, code: errorCode, message: message))
    }

    func onCallConnected(roomId: String, callUserId: UInt, currentUserId: UInt, timestamp: UInt64) {
        callbacks.yield(
            .connected(roomId: roomId, callUserId: callUserId, currentUserId: currentUserId, timestamp: timestamp))
    }

    func onCallDisconnected(
        roomId: String, hangupUserId: UInt, currentUserId: UInt, timestamp: UInt64, duration: UInt64
    ) {
        callbacks.yield(
            .disconnected(
                roomId: roomId, hangupUserId: hangupUserId, currentUserId: currentUserId, timestamp: timestamp,
                duration: duration))
    }

    func canJoinRtcOnCalling(eventInfo: [String: Any]) -> Bool {
        listener?.canJoinRtcOnCalling(eventInfo: eventInfo) ?? true
    }

    func tokenPrivilegeWillExpire() {
        callbacks.yield(.tokenWillExpire)
    }

    func callDebugInfo(message: String, logLevel: CallLogLevel) {
        callbacks.yield(.debug(message: message, level: logLevel))
    }
}
