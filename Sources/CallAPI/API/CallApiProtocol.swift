/// The call API, shaped like the existing CallAPI for iOS/Android/Web so apps move over with little change.
///
/// Completions get `nil` or an error (``CallAPIError``) whose description says what was wrong. They and
/// the listener callbacks run on whichever thread delivered the event; hop to your UI's actor yourself.
public protocol CallApiProtocol: AnyObject, Sendable {
    /// Keeps `config`; the state stays `idle`. Ignored with a warning unless `idle`.
    func initialize(config: CallConfig)
    /// Ends any call (cancel, reject or hangup), reports `idle`, and calls `completion` when done.
    /// No listener callback follows the completion.
    func deinitialize(completion: @escaping @Sendable () -> Void)
    /// Stores a new RTC token and hands it to the live channel, if any.
    func renewToken(with rtcToken: String)
    /// Stores `prepareConfig` and moves to `prepared`. Refused during a call and before `initialize`.
    func prepareForCall(prepareConfig: PrepareConfig, completion: (@Sendable ((any Error)?) -> Void)?)
    /// Adds a listener, held weakly.
    func addListener(listener: any CallApiListenerProtocol)
    /// Removes a listener.
    func removeListener(listener: any CallApiListenerProtocol)
    /// Places a video call to `remoteUserId`.
    func call(remoteUserId: UInt, completion: (@Sendable ((any Error)?) -> Void)?)
    /// Places a call of `callType` to `remoteUserId`; `callExtension` travels in `fromUserExtension`.
    func call(
        remoteUserId: UInt, callType: CallType, callExtension: [String: Any],
        completion: (@Sendable ((any Error)?) -> Void)?)
    /// Cancels the call this user placed, while it rings.
    func cancelCall(completion: (@Sendable ((any Error)?) -> Void)?)
    /// Accepts the call ringing from `remoteUserId`.
    func accept(remoteUserId: UInt, completion: (@Sendable ((any Error)?) -> Void)?)
    /// Rejects the call ringing from `remoteUserId`.
    func reject(remoteUserId: UInt, reason: String?, completion: (@Sendable ((any Error)?) -> Void)?)
    /// Ends the call with `remoteUserId` (cancels or rejects while it rings).
    func hangup(remoteUserId: UInt, reason: String?, completion: (@Sendable ((any Error)?) -> Void)?)
    /// The current call's id, or `""` outside a call.
    func getCallId() -> String
}
