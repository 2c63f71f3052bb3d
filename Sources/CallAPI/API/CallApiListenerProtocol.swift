/// Receives what a ``CallApiImpl`` reports. Held weakly. Only the state callback is required.
public protocol CallApiListenerProtocol: AnyObject, Sendable {
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
    /// Asked when a call rings: may the callee join the RTC channel before accepting? Default: yes.
    func canJoinRtcOnCalling(eventInfo: [String: Any]) -> Bool
    /// The RTC token expires soon; call ``CallApiProtocol/renewToken(with:)``.
    func tokenPrivilegeWillExpire()
    /// Diagnostic text.
    func callDebugInfo(message: String, logLevel: CallLogLevel)
}

extension CallApiListenerProtocol {
    public func onCallEventChanged(with event: CallEvent, eventReason: String?) {}
    public func onCallError(
        with errorEvent: CallErrorEvent, errorType: CallErrorCodeType, errorCode: Int, message: String?
    ) {}
    public func onCallConnected(roomId: String, callUserId: UInt, currentUserId: UInt, timestamp: UInt64) {}
    public func onCallDisconnected(
        roomId: String, hangupUserId: UInt, currentUserId: UInt, timestamp: UInt64, duration: UInt64
    ) {}
    public func canJoinRtcOnCalling(eventInfo: [String: Any]) -> Bool { true }
    public func tokenPrivilegeWillExpire() {}
    public func callDebugInfo(message: String, logLevel: CallLogLevel) {}
}
