import Foundation

/// What the bridge machine asks its shell to do, in order.
package enum SystemCallBridgeAction: Sendable, Equatable {
    // The system call screen.
    case reportIncoming(SystemCallReport)
    case reportOutgoingStarted(SystemCallReport)
    case reportOutgoingConnecting(UUID)
    case reportOutgoingConnected(UUID)
    /// The call ended for a reason the system shows.
    case reportEnded(UUID, SystemCallEndReason)
    /// The app ended the call itself: ask the system to end it (it answers with an end action).
    case requestEnd(UUID)
    /// The app accepted the call itself: ask the system to mark it answered (it answers with an answer action).
    case requestAnswer(UUID)
    /// Fulfill (or fail) the system's action.
    case complete(SystemCallActionKind, UUID, fulfilled: Bool)
    // CallAPI.
    case accept(remoteUserId: UInt)
    case reject(remoteUserId: UInt)
    case cancel
    case hangup(remoteUserId: UInt)
    // The media engine.
    case setMicrophoneMuted(Bool, video: Bool)
    // The shell's timers: when one falls due, feed `timerFired`.
    case startTimer(SystemCallTimer, millis: Int64)
    case stopTimer(SystemCallTimer)
    case log(String)
}
