/// Connection callbacks in the shape of the existing RTM manager's listener. Called on any thread.
public protocol SignalConnectionListener: AnyObject, Sendable {
    /// Logged in (first time or after a reconnect).
    func onConnected()
    /// The connection dropped (the client reconnects by itself) or the client stopped; `reason` says which.
    func onDisconnected(reason: String)
    /// The login token expires at `expiresAtMillis`: get a new one and call ``SignalClient/renewToken(_:)``.
    func onTokenPrivilegeWillExpire(expiresAtMillis: Int64)
}

extension SignalConnectionListener {
    public func onConnected() {}
    public func onDisconnected(reason: String) {}
    public func onTokenPrivilegeWillExpire(expiresAtMillis: Int64) {}
}
