/// What the signaling hub's gauges show, read in one call when the metrics are read.
package struct HubGauges: Equatable, Sendable {
    /// Open connections, logged in or not.
    package var sessions: Int
    /// Users with at least one logged-in session.
    package var usersOnline: Int
    /// Messages held for offline users, and their body bytes.
    package var held: Int
    package var heldBytes: Int
    /// Frames and bytes queued for all sessions' writers.
    package var queuedFrames: Int
    package var queuedBytes: Int
}

extension HubState {
    /// The gauges now.
    package var gauges: HubGauges {
        HubGauges(
            sessions: sessions.count, usersOnline: presence.onlineUserCount, held: held.count, heldBytes: held.bytes,
            queuedFrames: sessions.queuedFrames, queuedBytes: sessions.queuedBytes)
    }
}
