import CallAPI
import Testing

@testable import CallAPIWebRTC

/// A link's cumulative counters turned into each period's quality.
@Suite struct QualityMeterTests {
    func counters(
        audio: (received: Double, lost: Double, bytes: Double)?,
        video: (received: Double, lost: Double, bytes: Double)?,
        jitter: Double = 0.004, rtt: Double? = nil
    ) -> LinkCounters {
        LinkCounters(
            audio: audio.map {
                .init(
                    packetsReceived: $0.received, packetsLost: $0.lost, bytesReceived: $0.bytes, jitterSeconds: jitter)
            },
            video: video.map {
                .init(packetsReceived: $0.received, packetsLost: $0.lost, bytesReceived: $0.bytes, jitterSeconds: 0.002)
            }, roundTripSeconds: rtt)
    }

    @Test func theFirstReadingSetsTheBaselineAndEachNextOneMeasuresItsPeriod() {
        var meter = QualityMeter()
        let start = counters(audio: (100, 0, 10_000), video: (500, 0, 500_000))
        #expect(meter.reading(start, at: 1_000, gaps: (20, 40)) == nil)
        // 2 s later: audio 98 more packets and 2 lost, 16,000 bytes; video 400 more, none lost, 250,000 bytes.
        let next = counters(audio: (198, 2, 26_000), video: (900, 0, 750_000), rtt: 0.031)
        let quality = meter.reading(next, at: 3_000, gaps: (25, 700))
        #expect(
            quality
                == RTCQuality(
                    periodMillis: 2_000, audioLossPercent: 2, videoLossPercent: 0, jitterMillis: 4,
                    roundTripMillis: 31, audioKbps: 64, videoKbps: 1_000, audioFreezeMillis: 25, videoFreezeMillis: 700)
        )
        #expect(quality?.problem == nil)
    }

    @Test func aKindWithoutPacketsInThePeriodHasNoLossAndALinkWithoutItNone() {
        var meter = QualityMeter()
        _ = meter.reading(counters(audio: (10, 0, 1_000), video: nil), at: 0, gaps: (nil, nil))
        let quality = meter.reading(counters(audio: (10, 0, 1_000), video: nil), at: 500, gaps: (600, nil))
        #expect(quality?.audioLossPercent == nil && quality?.videoLossPercent == nil)
        #expect(quality?.audioKbps == 0 && quality?.videoKbps == 0 && quality?.audioFreezeMillis == 600)
        #expect(meter.reading(counters(audio: nil, video: nil), at: 500, gaps: (nil, nil)) == nil, "no time passed")
    }

    @Test func figuresThatCannotBeMeasurementsAreNamed() {
        #expect(RTCQuality(periodMillis: 0).problem == "\"periodMillis\" must be 1 ms to an hour")
        #expect(RTCQuality(periodMillis: 10, videoLossPercent: 101).problem == "\"videoLossPercent\" must be 0 to 100")
        #expect(RTCQuality(periodMillis: 10, roundTripMillis: -1).problem == "\"roundTripMillis\" must be 0 to 3600000")
    }
}
