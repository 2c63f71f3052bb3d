/// Hears a signaling adapter's connection come and go, and its credentials near their end: the listener of
/// the seeds' IM-backed signal clients (their Easemob client's connection listener), shared by every adapter
/// (`CallAPIMQTT`, `CallAPIMatrix`, your own; docs/adapters.md).
///
/// Adapters call these on any thread. While disconnected, an adapter fails sends at once (CallAPI's own
/// reliability resends what matters) rather than queueing them without bound.
public protocol ISignalConnectionListener: AnyObject, Sendable {
    /// The adapter is logged in and can send and receive: after `login`, and again after each reconnect.
    func onConnected()
    /// The connection was lost (`error` says why); the adapter is reconnecting on its own. Not called for
    /// `logout`.
    func onDisconnected(error: any Error)
    /// The credentials the adapter logged in with expire soon (or were just refused as expired): fetch a
    /// new token and hand it to the adapter's `renewToken`.
    func onTokenPrivilegeWillExpire()
}

extension ISignalConnectionListener {
    public func onConnected() {}
    public func onDisconnected(error: any Error) {}
    public func onTokenPrivilegeWillExpire() {}
}
