import Foundation

/// The system call screen as the bridge drives it: CallKit on Apple platforms (see `CallKitSystemCallScreen`),
/// `SimulatedSystemCallScreen` in tests. Each method maps to one system call; none may block.
///
/// The screen reports the user's actions back through ``SystemCallBridge/systemAnswered(uuid:)``,
/// ``SystemCallBridge/systemEnded(uuid:)`` and ``SystemCallBridge/systemSetMuted(uuid:muted:)``; the bridge
/// then completes each with ``completeAction(_:uuid:fulfilled:)``.
public protocol SystemCallScreen: AnyObject, Sendable {
    /// Show an incoming call (CallKit: `reportNewIncomingCall`). Called before a push handler returns.
    func reportIncomingCall(_ call: SystemCallReport)
    /// This user placed a call (CallKit: a `CXStartCallAction` transaction).
    func reportOutgoingCallStarted(_ call: SystemCallReport)
    /// The callee accepted; media is being set up (`reportOutgoingCall(with:startedConnectingAt:)`).
    func reportOutgoingCallConnecting(uuid: UUID)
    /// The outgoing call is connected (`reportOutgoingCall(with:connectedAt:)`).
    func reportOutgoingCallConnected(uuid: UUID)
    /// The call ended for `reason` (`reportCall(with:endedAt:reason:)`).
    func reportCallEnded(uuid: UUID, reason: SystemCallEndReason)
    /// The app ended the call itself: ask the system to end it (a `CXEndCallAction` transaction); the system
    /// answers with an end action.
    func requestEndCall(uuid: UUID)
    /// The app accepted the call itself: ask the system to answer it (a `CXAnswerCallAction` transaction).
    func requestAnswerCall(uuid: UUID)
    /// Fulfill (or fail) the system's pending action of `kind` on the call `uuid`.
    func completeAction(_ kind: SystemCallActionKind, uuid: UUID, fulfilled: Bool)
}
