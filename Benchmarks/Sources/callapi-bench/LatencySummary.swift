import CallAPI
import Histogram
import NIOConcurrencyHelpers

/// Percentiles of a latency distribution, in microseconds.
struct LatencySummary: Codable, Sendable, Equatable {
    var count: Int
    var p50: Double
    var p90: Double
    var p99: Double
    var p999: Double
    var max: Double
    var mean: Double

    static let empty = LatencySummary(count: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0, mean: 0)

    init(count: Int, p50: Double, p90: Double, p99: Double, p999: Double, max: Double, mean: Double) {
        self.count = count
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.p999 = p999
        self.max = max
        self.mean = mean
    }

    /// The summary of a histogram of nanoseconds.
    init(nanos histogram: Histogram<UInt64>) {
        guard histogram.totalCount > 0 else {
            self = .empty
            return
        }
        func micros(_ value: UInt64) -> Double { (Double(value) / 10).rounded() / 100 }
        count = Int(histogram.totalCount)
        p50 = micros(histogram.valueAtPercentile(50))
        p90 = micros(histogram.valueAtPercentile(90))
        p99 = micros(histogram.valueAtPercentile(99))
        p999 = micros(histogram.valueAtPercentile(99.9))
        max = micros(histogram.max)
        mean = (histogram.mean / 10).rounded() / 100
    }

    /// Whether the percentiles are in order (a sanity check for tests).
    var isOrdered: Bool { p50 <= p90 && p90 <= p99 && p99 <= p999 && p999 <= max }
}

/// A histogram of nanoseconds that many threads record into.
final class LatencyRecorder: Sendable {
    private let histogram = NIOLockedValueBox(LatencyRecorder.makeHistogram())

    /// A histogram from 1 ns to 100 s, three significant digits.
    static func makeHistogram() -> Histogram<UInt64> {
        Histogram<UInt64>(
            lowestDiscernibleValue: 1, highestTrackableValue: 100_000_000_000, numberOfSignificantValueDigits: .three)
    }

    func record(nanos: UInt64) {
        histogram.withLockedValue { _ = $0.record(Swift.min(nanos, 100_000_000_000)) }
    }

    /// The distribution so far, and a fresh start.
    func takeSummary() -> LatencySummary {
        histogram.withLockedValue { histogram in
            let summary = LatencySummary(nanos: histogram)
            histogram.reset()
            return summary
        }
    }

    var summary: LatencySummary { histogram.withLockedValue { LatencySummary(nanos: $0) } }
}
