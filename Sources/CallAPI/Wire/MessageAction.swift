/// The `message_action` of a call message (wire format 1.0).
public enum MessageAction: Int, Sendable, CaseIterable {
    case videoCall = 0
    case cancelCall = 1
    case accept = 2
    case reject = 3
    case hangup = 4
    case audioCall = 10

    var isCall: Bool { self == .videoCall || self == .audioCall }

    var callType: CallType? {
        switch self {
        case .videoCall: .video
        case .audioCall: .audio
        default: nil
        }
    }

    static func call(_ type: CallType) -> MessageAction { type == .video ? .videoCall : .audioCall }
}
