/// The rate limit both endpoints put on each connection's frames: `burst` at once, `ratePerSecond` sustained, and
/// a connection closed once it has had more than `maxRefusalsInARow` frames refused in a row.
package struct RateLimit: Sendable, Equatable {
    package var ratePerSecond: Double
    package var burst: Int
    package var maxRefusalsInARow: Int

    package init(ratePerSecond: Double, burst: Int, maxRefusalsInARow: Int) {
        self.ratePerSecond = ratePerSecond
        self.burst = burst
        self.maxRefusalsInARow = maxRefusalsInARow
    }

    /// What a refused frame broke, in the words both endpoints send.
    var exceeded: String {
        let rate = ratePerSecond == ratePerSecond.rounded() ? String(Int(ratePerSecond)) : String(ratePerSecond)
        return "more than \(burst) frames at once or \(rate) per second"
    }

    /// The verdict on one frame (``Sessions/admit(_:now:)``).
    package enum Verdict: Sendable, Equatable {
        /// Process the frame.
        case admitted
        /// No such session (it closed while the frame was on its way): drop the frame, say nothing.
        case unknownSession
        /// The first frame of a run over the limit: refuse it with this message and nothing else.
        case refuseFirst(String)
        /// A later frame of the run: drop it unanswered, so that a flood that does not read its socket cannot fill
        /// its own outbox with refusals.
        case dropQuietly
        /// The run is past ``maxRefusalsInARow``: close the connection with this message.
        case close(String)
    }
}
