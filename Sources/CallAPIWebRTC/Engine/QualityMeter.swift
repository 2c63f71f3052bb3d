import CallAPI

/// A peer link's cumulative receive counters, as webrtcbin's statistics give them.
struct LinkCounters: Sendable, Equatable {
    /// Per kind: packets received and lost, bytes received, the latest jitter (seconds); `nil` when the link has
    /// no inbound stream of that kind.
    struct Inbound: Sendable, Equatable {
        var packetsReceived: Double
        var packetsLost: Double
        var bytesReceived: Double
        var jitterSeconds: Double
    }

    var audio: Inbound?
    var video: Inbound?
    /// The round trip the peer's receiver reports give, in seconds.
    var roundTripSeconds: Double?
}

/// Turns a link's cumulative counters, read now and then, into the quality of each period (``RTCQuality``): the
/// differences since the last reading. Pure; the engine feeds it on its queue.
struct QualityMeter: Sendable {
    private var previous: (counters: LinkCounters, at: UInt64)?

    /// The quality since the last reading, or `nil` for the first (it only sets the baseline) and for a reading
    /// no later than the last. `gaps` are the longest gaps between decoded frames in the period.
    mutating func reading(
        _ counters: LinkCounters, at now: UInt64, gaps: (audio: UInt64?, video: UInt64?)
    ) -> RTCQuality? {
        defer { previous = (counters, now) }
        guard let previous, now > previous.at else { return nil }
        let period = Double(now - previous.at)
        func loss(_ new: LinkCounters.Inbound?, _ old: LinkCounters.Inbound?) -> Double? {
            guard let new else { return nil }
            let received = new.packetsReceived - (old?.packetsReceived ?? 0)
            let lost = Swift.max(0, new.packetsLost - (old?.packetsLost ?? 0))
            guard received + lost > 0 else { return nil }
            return lost / (received + lost) * 100
        }
        func kbps(_ new: LinkCounters.Inbound?, _ old: LinkCounters.Inbound?) -> Double {
            guard let new else { return 0 }
            // Bits per millisecond are kilobits per second.
            return Swift.max(0, new.bytesReceived - (old?.bytesReceived ?? 0)) * 8 / period
        }
        let jitters = [counters.audio?.jitterSeconds, counters.video?.jitterSeconds].compactMap { $0 }
        return RTCQuality(
            periodMillis: Int64(now - previous.at),
            audioLossPercent: loss(counters.audio, previous.counters.audio),
            videoLossPercent: loss(counters.video, previous.counters.video),
            jitterMillis: jitters.max().map { $0 * 1000 },
            roundTripMillis: counters.roundTripSeconds.map { $0 * 1000 },
            audioKbps: kbps(counters.audio, previous.counters.audio),
            videoKbps: kbps(counters.video, previous.counters.video),
            audioFreezeMillis: gaps.audio.map { Int64($0) }, videoFreezeMillis: gaps.video.map { Int64($0) })
    }
}
