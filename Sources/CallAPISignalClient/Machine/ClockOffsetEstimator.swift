import CallAPISignalProtocol

/// The clock-offset estimate of one client as a pure machine: samples in, the estimate as a query (``ClockOffset``).
///
/// Keeps the last ``capacity`` samples, so that a clock that drifts, or a path that got faster, is followed; the
/// estimate is the one with the smallest round trip among them.
struct ClockOffsetEstimator: Sendable, Equatable {
    /// One request and its answer.
    struct Sample: Sendable, Equatable {
        var offsetMillis: Int64
        var roundTripMillis: Int64
    }

    /// Samples kept (the login's, then one per ping: eight are two minutes at the default ping interval).
    static let capacity = 8

    private(set) var samples: [Sample] = []

    /// A request that left at `sentAt` (local), answered with the server's `serverTime`, arrived at `receivedAt`
    /// (local). A sample whose answer seems to arrive before its request left (the local clock stepped back) is
    /// ignored.
    mutating func sample(sentAt: Int64, serverTime: Int64, receivedAt: Int64) {
        let roundTrip = receivedAt - sentAt
        guard roundTrip >= 0 else { return }
        // The server read its clock at the midpoint, give or take half the round trip.
        let offset = serverTime - (sentAt + roundTrip / 2)
        if samples.count == Self.capacity { samples.removeFirst() }
        samples.append(Sample(offsetMillis: offset, roundTripMillis: roundTrip))
    }

    /// The estimate: the sample with the smallest round trip (the earliest of equals); `nil` before any.
    var estimate: ClockOffset? {
        guard let best = samples.min(by: { $0.roundTripMillis < $1.roundTripMillis }) else { return nil }
        return ClockOffset(
            offsetMillis: best.offsetMillis, errorMillis: (best.roundTripMillis + 1) / 2, samples: samples.count)
    }
}
