import Dispatch
import Synchronization

/// When media from one peer was last decoded, and the longest gap of each kind, written from GStreamer's streaming
/// threads without a lock (every audio packet and video frame records it) and read by the engine's media watch and
/// quality meter.
final class MediaArrivals: Sendable {
    private let lastMillis = Atomic<UInt64>(0)
    private let lastAudio = Atomic<UInt64>(0)
    private let lastVideo = Atomic<UInt64>(0)
    /// The longest gap between two decoded frames of each kind since the quality meter last took it.
    private let longestAudioGap = Atomic<UInt64>(0)
    private let longestVideoGap = Atomic<UInt64>(0)

    /// The monotonic clock the engine's media watch uses, in milliseconds.
    static var nowMillis: UInt64 { DispatchTime.now().uptimeNanoseconds / 1_000_000 }

    /// Media of `kind` was decoded now.
    func record(_ kind: PeerLink.Kind) {
        let now = Self.nowMillis
        lastMillis.store(now, ordering: .relaxed)
        switch kind {
        case .audio: Self.note(now, last: lastAudio, longest: longestAudioGap)
        case .video: Self.note(now, last: lastVideo, longest: longestVideoGap)
        }
    }

    private static func note(_ now: UInt64, last: borrowing Atomic<UInt64>, longest: borrowing Atomic<UInt64>) {
        let previous = last.exchange(now, ordering: .relaxed)
        if previous != 0, now > previous {
            longest.max(now - previous, ordering: .relaxed)
        }
    }

    /// When media was last decoded, if ever.
    var last: UInt64? {
        let value = lastMillis.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }

    /// The longest gap of each kind since the last call (counting a gap still open at `now`), and starts anew; `nil`
    /// for a kind never decoded.
    func takeLongestGaps(now: UInt64) -> (audio: UInt64?, video: UInt64?) {
        (
            Self.take(now, last: lastAudio, longest: longestAudioGap),
            Self.take(now, last: lastVideo, longest: longestVideoGap)
        )
    }

    private static func take(_ now: UInt64, last: borrowing Atomic<UInt64>, longest: borrowing Atomic<UInt64>)
        -> UInt64?
    {
        let lastArrival = last.load(ordering: .relaxed)
        guard lastArrival != 0 else { return nil }
        let closed = longest.exchange(0, ordering: .relaxed)
        return Swift.max(closed, now > lastArrival ? now - lastArrival : 0)
    }
}
