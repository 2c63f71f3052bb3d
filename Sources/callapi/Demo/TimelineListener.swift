import CallAPI
import CallAPITesting

/// Records one user's side of the demo with millisecond offsets from the demo's start.
final class TimelineListener: CallApiListenerProtocol {
    struct Line: Sendable {
        var offsetMillis: Int64
        var userId: UInt
        var text: String
    }

    let userId: UInt
    private let clock: any CallClock
    private let start: Int64
    private let state = Locked<(lines: [Line], states: [(CallStateType, CallStateReason)], costs: [String: Int])>(
        ([], [], [:]))

    init(userId: UInt, clock: any CallClock, start: Int64) {
        self.userId = userId
        self.clock = clock
        self.start = start
    }

    var lines: [Line] { state.withLock { $0.lines } }
    var states: [(CallStateType, CallStateReason)] { state.withLock { $0.states } }
    var currentState: CallStateType? { states.last?.0 }
    var costMap: [String: Int] { state.withLock { $0.costs } }

    /// Adds a line of the demo's own (what a viewer saw, what the showroom did).
    func note(_ text: String) { add(text) }

    private func add(_ text: String) {
        let line = Line(offsetMillis: clock.nowMillis() - start, userId: userId, text: text)
        state.withLock { $0.lines.append(line) }
    }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        self.state.withLock { $0.states.append((state, stateReason)) }
        if let costs = eventInfo[kCostTimeMap] as? [String: Any] {
            self.state.withLock { $0.costs = costs.compactMapValues { $0 as? Int } }
        }
        add("state \(state)(\(stateReason))" + (eventReason.isEmpty ? "" : " \"\(eventReason)\""))
    }

    func onCallEventChanged(with event: CallEvent, eventReason: String?) {
        add("  event \(event)" + (eventReason.map { " \"\($0)\"" } ?? ""))
    }

    func onCallError(with errorEvent: CallErrorEvent, errorType: CallErrorCodeType, errorCode: Int, message: String?) {
        add("  error \(errorEvent) \(errorType) \(errorCode): \(message ?? "")")
    }

    func onCallConnected(roomId: String, callUserId: UInt, currentUserId: UInt, timestamp: UInt64) {
        add("  onCallConnected room=\(roomId) caller=\(callUserId)")
    }

    func onCallDisconnected(
        roomId: String, hangupUserId: UInt, currentUserId: UInt, timestamp: UInt64, duration: UInt64
    ) {
        add("  onCallDisconnected room=\(roomId) by=\(hangupUserId) duration=\(duration) ms")
    }
}
