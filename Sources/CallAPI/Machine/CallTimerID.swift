/// The timers of the reliability layer (the ring timer has actions of its own, as the contract names it).
package enum CallTimerID: Sendable, Hashable {
    /// Resend our message `messageId` unless acknowledged.
    case retry(messageId: Int)
    /// Send the next keep-alive of `callId`.
    case keepAlive(callId: String)
    /// Check whether the peer of `callId` has gone silent.
    case peerSilence(callId: String)
    /// The peer of `callId` left the RTC channel and has not come back.
    case remoteLeftGrace(callId: String)
}

/// A message sent reliably and not yet acknowledged.
struct OutstandingMessage: Sendable, Equatable {
    var message: CallMessage
    var to: UInt
    var firstSentAt: Int64
    var nextDelay: Int64
    var attempts = 0
}
