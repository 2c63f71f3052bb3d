/// Whether media from one peer flows, as the engine's media watch sees it (times in ``MediaArrivals/nowMillis``).
///
/// A path that breaks mid-call (a phone leaves its Wi-Fi, a route goes away) stops the peer's media without a word
/// from ICE: webrtcbin 1.22 does not enable consent freshness, so its connection state stays `connected`. The watch
/// therefore judges by the media itself: silence from a peer that publishes what this member subscribes to means the
/// path broke, and the engine restarts the link. A link that never brings media after its negotiation is restarted
/// too: with a TURN server configured, webrtcbin 1.22 with libnice 0.1.21 at times never reports a single local
/// candidate for the offer of a process's first link (it starts gathering and goes no further; seen in 4 of 6 runs of
/// the network-change test between the test namespaces, never in 5 without TURN), and the fresh link connects.
enum MediaFlow: Sendable, Equatable {
    /// No media is expected (the peer publishes nothing this member takes, or the link is still negotiating), or none
    /// has been decoded since it was expected from `since`.
    case waiting(since: UInt64)
    /// Media is decoded.
    case flowing
    /// Media stopped after `lastMedia`; the link was restarted at `restartedAt`.
    case interrupted(lastMedia: UInt64, restartedAt: UInt64)

    /// How long a publishing peer may be silent before its path counts as broken. Audio alone brings 50 packets a
    /// second, so 1.5 s is 75 missing packets, not a hiccup.
    static let silenceMillis: UInt64 = 1_500
    /// How long a negotiated link has to bring its first media before it is restarted (a relayed first call brings it
    /// within about 1.2 s here).
    static let connectMillis: UInt64 = 4_000
    /// How long a restarted link has to bring media before it is restarted again.
    static let retryMillis: UInt64 = 5_000

    /// What the watch concludes at one look.
    enum Decision: Sendable, Equatable {
        case nothing
        /// Media stopped: report it and restart the link.
        case interrupted
        /// Restart the link without a report: a restarted link that has not brought media in time, or a link that
        /// never did.
        case restart
        /// Media is back, `gapMillis` after the last media before the break.
        case resumed(gapMillis: Int)
    }

    /// One look at `now`: whether the peer `publishes` something this member takes, whether the current link is
    /// `negotiated`, and when media was last decoded on it.
    mutating func watch(publishes: Bool, negotiated: Bool, lastArrival: UInt64?, now: UInt64) -> Decision {
        guard publishes else {
            self = .waiting(since: now)
            return .nothing
        }
        switch self {
        case .waiting(let since):
            if let lastArrival, lastArrival >= since {
                self = .flowing
            } else if !negotiated {
                self = .waiting(since: now)
            } else if now > since + Self.connectMillis {
                self = .waiting(since: now)
                return .restart
            }
            return .nothing
        case .flowing:
            guard let lastArrival, now > lastArrival + Self.silenceMillis else { return .nothing }
            self = .interrupted(lastMedia: lastArrival, restartedAt: now)
            return .interrupted
        case .interrupted(let lastMedia, let restartedAt):
            if let lastArrival, lastArrival >= restartedAt {
                self = .flowing
                return .resumed(gapMillis: Int(lastArrival - lastMedia))
            }
            guard now > restartedAt + Self.retryMillis else { return .nothing }
            self = .interrupted(lastMedia: lastMedia, restartedAt: now)
            return .restart
        }
    }
    /// The peer restarted the link at `now`: whether to report the interruption (media was flowing and nobody had
    /// noticed it stop here yet). `lastArrival` is the old link's.
    mutating func peerRestarted(lastArrival: UInt64?, now: UInt64) -> Bool {
        switch self {
        case .flowing:
            self = .interrupted(lastMedia: lastArrival ?? now, restartedAt: now)
            return true
        case .interrupted(let lastMedia, _):
            self = .interrupted(lastMedia: lastMedia, restartedAt: now)
            return false
        case .waiting:
            self = .waiting(since: now)
            return false
        }
    }
}
