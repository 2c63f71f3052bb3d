// docs/adapters.md, step 1: the IM SDK you already have, as the adapter sees it. This protocol stands for a
// vendor SDK such as Easemob's (`EMClient`): log in with a user id and token, log out, renew the token, send
// a text message to a user, and a delegate told of messages, of the connection and of the token's expiry.
// With the real SDK, delete the protocol and use the SDK's class in the adapter below.

/// The subset of an IM SDK a CallAPI signal client uses.
protocol IMSDK: AnyObject, Sendable {
    func login(userId: String, token: String, completion: @escaping @Sendable ((any Error)?) -> Void)
    func logout()
    func renewToken(_ token: String)
    /// Sends a text message; `completion` runs when the IM service has taken it (or could not).
    func send(text: String, to userId: String, completion: @escaping @Sendable ((any Error)?) -> Void)
    func setDelegate(_ delegate: (any IMSDKDelegate)?)
}

/// What the SDK tells its delegate.
protocol IMSDKDelegate: AnyObject, Sendable {
    /// A text message from `sender`, as the IM service authenticated it.
    func messageReceived(text: String, from sender: String)
    func connectionChanged(connected: Bool)
    func tokenWillExpire()
}
