import Dispatch

/// Monotonic nanoseconds, one clock for every thread of the process (so one-way latency can be stamped in a
/// payload and read back by the receiver).
enum BenchClock {
    static func nanos() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    static func seconds(since start: UInt64) -> Double { Double(nanos() &- start) / 1e9 }
}
