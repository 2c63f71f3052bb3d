import CallAPISignalProtocol

/// Something the server told the client, besides connection state.
public enum SignalClientEvent: Sendable, Equatable {
    /// A message; `from` is the sender's id as authenticated by the server.
    case message(from: String, body: String, sentAt: Int64)
    /// A user came online or went offline (after ``SignalClient/subscribePresence()``).
    case presenceChanged(userId: String, online: Bool)
    /// The token expires at `expiresAtMillis`.
    case tokenWillExpire(expiresAtMillis: Int64)
    /// A message the server held for an offline user was delivered, or expired.
    case heldResult(messageId: String, to: String, delivered: Bool)
    /// A call pushed to this user was withdrawn before this session took it (the server's tombstone, at login):
    /// end the call the app reported for the push (`SystemCallBridge.pushedCallWithdrawn`).
    case callWithdrawn(callId: String, reason: PushMark.Reason)
    /// The server asks this client to place a call with the server's call id (docs/match.md). A
    /// ``ServerCallAgent`` places it through CallAPI; without one, the app does.
    case callPlaced(ServerPlacedCall)
    /// The match queue paired this user with another (after ``SignalClient/enterMatchQueue(tags:)``); it is no
    /// longer waiting.
    case matched(MatchFound)
}
