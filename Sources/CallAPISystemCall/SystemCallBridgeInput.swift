import Foundation

/// What happens to the bridge: pushes, CallAPI's state changes, the system screen's actions, timers.
package enum SystemCallBridgeInput: Sendable, Equatable {
    /// A VoIP push announced a call. The system must be told of it before the push handler returns.
    case pushReceived(SystemCallPush)
    /// A push arrived whose payload could not be read; it must still be reported (and is ended at once).
    case unreadablePushReceived(rawPayload: String, problem: String)
    /// The server's tombstone: a pushed call was withdrawn before this device took it.
    case pushedCallWithdrawn(callId: String, SystemCallWithdrawal)
    case callAPI(CallAPIUpdate)
    /// The user acted on the system call screen.
    case system(SystemCallRequest, uuid: UUID)
    case timerFired(SystemCallTimer)
}

/// What the user asked of a call on the system call screen.
package enum SystemCallRequest: Sendable, Equatable {
    case answer
    case end
    case setMuted(Bool)

    var kind: SystemCallActionKind {
        switch self {
        case .answer: .answer
        case .end: .end
        case .setMuted: .mute
        }
    }
}

/// The bridge's timers, one per purpose and call.
package enum SystemCallTimer: Sendable, Hashable {
    /// A pushed call must ring over signaling before this fires.
    case arrival(callId: String)
    /// An answer from the system screen must reach `connecting` before this fires.
    case answer(callId: String)
}
