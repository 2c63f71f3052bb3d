/// The call actions by media.
extension MessageAction {
    var callType: CallType? {
        switch self {
        case .videoCall: .video
        case .audioCall: .audio
        case .cancelCall, .accept, .reject, .hangup, .ack, .keepAlive: nil
        }
    }

    static func call(_ type: CallType) -> MessageAction { type == .video ? .videoCall : .audioCall }
}
