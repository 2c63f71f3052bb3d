/// A signaling channel: anything that can send a string to a user and deliver strings sent to this user.
///
/// The shape is the existing CallAPI's, so adapters written for it port over. Implementations call
/// listeners on any thread.
public protocol ISignalClient: AnyObject, Sendable {
    /// Sends `message` to the user whose id is `userId` (decimal). `completion` gets `nil` once the channel
    /// has accepted (or delivered) the message, or an error saying why it could not.
    func sendMessage(userId: String, message: String, completion: (@Sendable ((any Error)?) -> Void)?)
    /// Starts delivering received messages to `listener` (held weakly).
    func addListener(listener: any ISignalClientListener)
    /// Stops delivering to `listener`.
    func removeListener(listener: any ISignalClientListener)
}

/// Receives what a signaling channel delivers.
public protocol ISignalClientListener: AnyObject, Sendable {
    /// A message arrived; the channel does not say who sent it.
    func onMessageReceive(message: String)
    /// A message arrived from a sender the channel has authenticated. Channels that know the sender
    /// call this instead of ``onMessageReceive(message:)``; CallAPI then trusts this id over the body's.
    func onMessageReceive(message: String, from sender: SignalSender)
    /// Diagnostic text from the channel.
    func debugInfo(message: String, logLevel: Int)
}

extension ISignalClientListener {
    public func onMessageReceive(message: String, from sender: SignalSender) { onMessageReceive(message: message) }
    public func debugInfo(message: String, logLevel: Int) {}
}

/// What a signaling channel vouches for about a received message.
public struct SignalSender: Sendable, Equatable {
    /// The authenticated sender's user id (decimal string, as the channel knows users).
    public var userId: String
    /// When the channel received the message from its sender, in milliseconds since 1970 on the channel's
    /// clock, if it says.
    public var receivedAtMillis: Int64?

    public init(userId: String, receivedAtMillis: Int64? = nil) {
        self.userId = userId
        self.receivedAtMillis = receivedAtMillis
    }
}
