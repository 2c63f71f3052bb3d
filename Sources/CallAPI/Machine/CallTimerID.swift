/// The machine's timers. The shell runs one per id (starting an id again restarts it) and feeds
/// ``CallInput/timerFired(_:)`` when it falls due.
package enum CallTimerID: Sendable, Hashable {
    /// The ring timer of `callId` (`callTimeoutMillisecond`): runs while ringing and connecting.
    case ring(callId: String)
    /// Resend our message `messageId` unless acknowledged.
    case retry(messageId: Int)
    /// Send the next keep-alive of `callId`.
    case keepAlive(callId: String)
    /// Check whether the peer of `callId` has gone silent.
    case peerSilence(callId: String)
    /// Repeat this device's accept of `callId` to its own user's other devices.
    case ownDeviceNotice(callId: String)
    /// The peer of `callId` dropped out of the RTC channel and has not come back.
    case remoteLeftGrace(callId: String)
    /// The peer of `callId`, an existing client, quit the RTC channel (left it on purpose): its call is over,
    /// even if it joins the same channel again for its next call before its hangup arrives.
    case remoteQuitGrace(callId: String)
}
