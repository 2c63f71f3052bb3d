/// How media from one remote user arrived over the last period, as an engine measures it from its transport's
/// statistics and its decoders (``RTCEngineEvent/remoteQuality(channel:uid:_:)``). A value the engine could not
/// measure in the period is `nil` (no packets of that kind, no receiver report yet).
public struct RTCQuality: Sendable, Equatable, Codable {
    /// The period measured, in milliseconds.
    public var periodMillis: Int64
    /// Audio and video packets lost in the period, as a percentage of those sent (0–100).
    public var audioLossPercent: Double?
    public var videoLossPercent: Double?
    /// The largest inter-arrival jitter reported for the streams, in milliseconds.
    public var jitterMillis: Double?
    /// The round trip to the peer, from its receiver reports, in milliseconds.
    public var roundTripMillis: Double?
    /// The bitrate received in the period, in kilobits per second.
    public var audioKbps: Double
    public var videoKbps: Double
    /// The longest gap between two decoded audio and video frames in the period (a freeze), in milliseconds; `nil`
    /// when none of that kind was decoded.
    public var audioFreezeMillis: Int64?
    public var videoFreezeMillis: Int64?

    public init(
        periodMillis: Int64, audioLossPercent: Double? = nil, videoLossPercent: Double? = nil,
        jitterMillis: Double? = nil, roundTripMillis: Double? = nil, audioKbps: Double = 0, videoKbps: Double = 0,
        audioFreezeMillis: Int64? = nil, videoFreezeMillis: Int64? = nil
    ) {
        self.periodMillis = periodMillis
        self.audioLossPercent = audioLossPercent
        self.videoLossPercent = videoLossPercent
        self.jitterMillis = jitterMillis
        self.roundTripMillis = roundTripMillis
        self.audioKbps = audioKbps
        self.videoKbps = videoKbps
        self.audioFreezeMillis = audioFreezeMillis
        self.videoFreezeMillis = videoFreezeMillis
    }

    /// Why these figures cannot be a measurement (a percentage outside 0–100, a negative or absurd number), or nil.
    public var problem: String? {
        let hour: Double = 3_600_000
        guard (1...Int64(hour)).contains(periodMillis) else { return "\"periodMillis\" must be 1 ms to an hour" }
        for (name, value) in [("audioLossPercent", audioLossPercent), ("videoLossPercent", videoLossPercent)] {
            if let value, !(0...100).contains(value) { return "\"\(name)\" must be 0 to 100" }
        }
        for (name, value) in [
            ("jitterMillis", jitterMillis), ("roundTripMillis", roundTripMillis), ("audioKbps", audioKbps),
            ("videoKbps", videoKbps), ("audioFreezeMillis", audioFreezeMillis.map(Double.init)),
            ("videoFreezeMillis", videoFreezeMillis.map(Double.init)),
        ] {
            if let value, !(0...hour).contains(value) { return "\"\(name)\" must be 0 to \(Int(hour))" }
        }
        return nil
    }
}
