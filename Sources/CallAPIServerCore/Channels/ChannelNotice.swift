/// A member joined or left a channel: what the server logs and posts to the webhook (this is the webhook's body).
public struct ChannelNotice: Sendable, Equatable, Codable {
    /// `userJoined` or `userLeft`.
    public var event: Event
    public var channel: String
    public var uid: UInt
    /// The device the member joined from, when it named one (absent otherwise).
    public var device: String?
    /// `joined` for `userJoined`; why the member left for `userLeft`.
    public var reason: Reason
    /// When, in milliseconds since 1970 (server clock).
    public var time: Int64

    /// The kind of event.
    public enum Event: String, Sendable, Codable {
        /// A member joined.
        case userJoined
        /// A member left or was removed.
        case userLeft
    }

    /// Why the event happened.
    public enum Reason: String, Sendable, Codable {
        /// The member joined (`userJoined`).
        case joined
        /// The member sent `leave`.
        case quit
        /// The member's socket was lost.
        case dropped
        /// The member did not read its socket and its outbox passed the server's limit.
        case slowConsumer
        /// The operator kicked the member.
        case kicked
        /// The member's token expired.
        case tokenExpired
        /// The same member (uid and device) joined again on another socket.
        case replaced
        /// The member stayed alone too long after the other left.
        case watchdog
        /// The server shut down.
        case shutdown
    }

    public init(event: Event, channel: String, uid: UInt, device: String? = nil, reason: Reason, time: Int64) {
        self.event = event
        self.channel = channel
        self.uid = uid
        self.device = device
        self.reason = reason
        self.time = time
    }
}
