import Dispatch
import Synchronization

/// When media from one peer was last decoded, written from GStreamer's streaming threads without a lock (every
/// audio packet and video frame records it) and read by the engine's media watch.
final class MediaArrivals: Sendable {
    private let lastMillis = Atomic<UInt64>(0)

    /// The monotonic clock the engine's media watch uses, in milliseconds.
    static var nowMillis: UInt64 { DispatchTime.now().uptimeNanoseconds / 1_000_000 }

    /// Media was decoded now.
    func record() { lastMillis.store(Self.nowMillis, ordering: .relaxed) }

    /// When media was last decoded, if ever.
    var last: UInt64? {
        let value = lastMillis.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }
}
