import CallAPI

/// Prints the call events a phone user wants to see (the peer joining or leaving the room, the first
/// frame) and hands RTC errors, such as being kicked from the room, to `onRTCError`.
final class PhoneListener: CallApiListenerProtocol {
    private let say: @Sendable (String) -> Void
    private let onRTCError: @Sendable (Int, String) -> Void

    init(say: @escaping @Sendable (String) -> Void, onRTCError: @escaping @Sendable (Int, String) -> Void) {
        self.say = say
        self.onRTCError = onRTCError
    }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {}

    func onCallEventChanged(with event: CallEvent, eventReason: String?) {
        switch event {
        case .remoteJoined, .remoteLeft, .recvRemoteFirstFrame, .localJoined, .mediaReconnecting, .mediaReconnected:
            say("event: \(event)" + (eventReason.map { $0.isEmpty ? "" : " (\($0))" } ?? ""))
        default:
            break
        }
    }

    func onCallError(with errorEvent: CallErrorEvent, errorType: CallErrorCodeType, errorCode: Int, message: String?) {
        say("error: \(errorEvent) \(errorCode) \(message ?? "")")
        if errorEvent == .rtcOccurError { onRTCError(errorCode, message ?? "") }
    }
}
