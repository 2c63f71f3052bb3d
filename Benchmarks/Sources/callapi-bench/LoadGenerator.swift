import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An open-loop load generator: calls `emit` at a fixed rate for a fixed time (or until `emit` returns false), on a thread of its own so the
/// pacing neither waits for replies nor takes a thread from Swift's cooperative pool.
///
/// Sends that fall due while the thread sleeps go out together when it wakes (the kernel's timer slack is tens
/// of microseconds); each is stamped when it is really sent.
enum LoadGenerator {
    struct Outcome: Sendable {
        /// Calls of `emit`.
        var sent: Int
        var elapsedSeconds: Double
        /// `emit` asked to stop before the time was up.
        var stoppedEarly: Bool
        var achievedRate: Double { elapsedSeconds > 0 ? Double(sent) / elapsedSeconds : 0 }
    }

    static func run(rate: Double, seconds: Double, emit: @escaping @Sendable (Int) -> Bool) async -> Outcome {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: pace(rate: rate, seconds: seconds, emit: emit))
            }
            thread.name = "bench-load"
            thread.start()
        }
    }

    private static func pace(rate: Double, seconds: Double, emit: (Int) -> Bool) -> Outcome {
        let total = Int(rate * seconds)
        let start = BenchClock.nanos()
        let interval = 1e9 / rate
        var sent = 0
        while sent < total {
            let now = BenchClock.nanos() &- start
            let due = min(total, Int(Double(now) / interval) + 1)
            while sent < due {
                guard emit(sent) else {
                    return Outcome(sent: sent, elapsedSeconds: BenchClock.seconds(since: start), stoppedEarly: true)
                }
                sent += 1
            }
            if sent < total {
                let next = UInt64(Double(sent) * interval)
                let now = BenchClock.nanos() &- start
                if next > now { sleepNanos(next - now) }
            }
        }
        return Outcome(sent: sent, elapsedSeconds: BenchClock.seconds(since: start), stoppedEarly: false)
    }

    private static func sleepNanos(_ nanos: UInt64) {
        var request = timespec(tv_sec: Int(nanos / 1_000_000_000), tv_nsec: Int(nanos % 1_000_000_000))
        var remaining = timespec()
        _ = nanosleep(&request, &remaining)
    }
}
