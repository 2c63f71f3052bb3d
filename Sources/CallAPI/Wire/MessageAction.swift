/// The `message_action` of a call message (wire format 1.0).
package enum MessageAction: Int, Sendable, CaseIterable {
    case videoCall = 0
    case cancelCall = 1
    case accept = 2
    case reject = 3
    case hangup = 4
    case audioCall = 10
    /// Ours: acknowledges a message (`ackMessageId`); older clients ignore it.
    case ack = 20
    /// Ours: "still here" during a call; acknowledged like any message.
    case keepAlive = 21

    var isCall: Bool { self == .videoCall || self == .audioCall }

    /// The messages of the 1.0 call flow (not acknowledgements or keep-alives).
    var isCallFlow: Bool { self != .ack && self != .keepAlive }

    var callType: CallType? {
        switch self {
        case .videoCall: .video
        case .audioCall: .audio
        default: nil
        }
    }

    static func call(_ type: CallType) -> MessageAction { type == .video ? .videoCall : .audioCall }
}
