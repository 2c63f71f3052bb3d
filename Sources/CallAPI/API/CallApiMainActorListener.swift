/// A listener that lives on the main actor, such as a view controller: ``CallApiImpl`` delivers every callback
/// to it on the main actor, in the order the API reported them, so it can touch its views directly.
///
/// Add it with ``CallApiImpl/addListener(listener:)-(CallApiMainActorListener)`` exactly as a
/// ``CallApiListenerProtocol`` listener; it is held weakly too. Callbacks are delivered asynchronously: the API
/// never waits for the main actor, so a callback may arrive after the state it reports has moved on (read
/// ``CallApiImpl/state`` for the state now). The one question the API asks synchronously,
/// ``canJoinRtcOnCalling(eventInfo:)``, is `nonisolated`: it is asked on the API's thread.
@MainActor
public protocol CallApiMainActorListener: AnyObject, Sendable {
    /// The state changed. `eventInfo` uses the `k…` keys (``kFromUserId``, ``kCostTimeMap``...).
    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any])
    /// A finer-grained event happened.
    func onCallEventChanged(with event: CallEvent, eventReason: String?)
    /// Something failed: a send, the RTC engine...
    func onCallError(with errorEvent: CallErrorEvent, errorType: CallErrorCodeType, errorCode: Int, message: String?)
    /// The call became connected. `callUserId` is the caller; `timestamp` is NTP wall time in milliseconds.
    func onCallConnected(roomId: String, callUserId: UInt, currentUserId: UInt, timestamp: UInt64)
    /// A connected call ended. `duration` is milliseconds since it connected.
    func onCallDisconnected(
        roomId: String, hangupUserId: UInt, currentUserId: UInt, timestamp: UInt64, duration: UInt64)
    /// Asked on the API's thread when a call rings: may the callee join the RTC channel before accepting?
    nonisolated func canJoinRtcOnCalling(eventInfo: [String: Any]) -> Bool
    /// The RTC token expires soon; call ``CallApiProtocol/renewToken(with:)``.
    func tokenPrivilegeWillExpire()
    /// Diagnostic text.
    func callDebugInfo(message: String, logLevel: CallLogLevel)
}

extension CallApiMainActorListener {
    public func onCallEventChanged(with event: CallEvent, eventReason: String?) {}
    public func onCallError(
        with errorEvent: CallErrorEvent, errorType: CallErrorCodeType, errorCode: Int, message: String?
    ) {}
    public func onCallConnected(roomId: String, callUserId: UInt, currentUserId: UInt, timestamp: UInt64) {}
    public func onCallDisconnected(
        roomId: String, hangupUserId: UInt, currentUserId: UInt, timestamp: UInt64, duration: UInt64
    ) {}
    public nonisolated func canJoinRtcOnCalling(eventInfo: [String: Any]) -> Bool { true }
    public func tokenPrivilegeWillExpire() {}
    public func callDebugInfo(message: String, logLevel: CallLogLevel) {}
}
