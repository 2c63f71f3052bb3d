import CallAPIWire

/// What one device saw of one call, on its own clock, with that clock's offset to the server's: the client sends it
/// once the call ends (`report`), and the server keeps it with the call's ledger row and merges it with the other
/// side's onto one time line (docs/timeline.md).
public struct CallReport: Codable, Sendable, Equatable {
    /// The request id the answer (`reported` or `error`) carries.
    public var id: Int?
    public var callId: String
    /// The device that saw the call (the rules of a push device id).
    public var device: String
    /// The device's clock against the server's when it reported (``ClockOffset``).
    public var clock: ClockOffset
    /// What happened, in the order the device saw it.
    public var events: [Mark]
    /// How media from the peer arrived, period by period (empty when the device's engine does not measure it).
    public var quality: [QualitySample]

    public init(
        id: Int? = nil, callId: String, device: String, clock: ClockOffset, events: [Mark],
        quality: [QualitySample] = []
    ) {
        self.id = id
        self.callId = callId
        self.device = device
        self.clock = clock
        self.events = events
        self.quality = quality
    }

    enum CodingKeys: String, CodingKey { case id, callId, device, clock, events, quality }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(Int.self, forKey: .id)
        callId = try container.decode(String.self, forKey: .callId)
        device = try container.decode(String.self, forKey: .device)
        clock = try container.decode(ClockOffset.self, forKey: .clock)
        events = try container.decode([Mark].self, forKey: .events)
        quality = try container.decodeIfPresent([QualitySample].self, forKey: .quality) ?? []
    }

    /// The quality of one period, from the peer `peer`, measured up to `at` (the device's clock).
    public struct QualitySample: Codable, Sendable, Equatable {
        public var at: Int64
        public var peer: UInt
        public var quality: RTCQuality

        public init(at: Int64, peer: UInt, quality: RTCQuality) {
            self.at = at
            self.peer = peer
            self.quality = quality
        }
    }

    /// One thing the device saw: a CallAPI state, event or stage, at a time of its clock.
    public struct Mark: Codable, Sendable, Equatable {
        /// `state.connected`, `event.remoteAccepted`, `stage.recvFirstFrame`… (1–64 characters of
        /// `A-Z a-z 0-9 . _ -`).
        public var name: String
        /// Milliseconds since 1970 on the device's clock.
        public var at: Int64
        /// A few words more (a reason, an error), at most ``CallReport/maxDetailLength`` characters.
        public var detail: String?

        public init(name: String, at: Int64, detail: String? = nil) {
            self.name = name
            self.at = at
            self.detail = detail
        }
    }

    /// The most events one report carries.
    public static let maxEvents = 256
    /// The most quality samples one report carries: ten minutes at the default two seconds; a longer call keeps its
    /// latest.
    public static let maxQualitySamples = 300
    /// The longest detail, in characters.
    public static let maxDetailLength = 200
    /// The largest clock offset taken, either way (a day): beyond it the device's clock is not worth merging.
    public static let maxOffsetMillis: Int64 = 86_400_000
    /// The largest error taken: a minute.
    public static let maxErrorMillis: Int64 = 60_000

    /// Why the server refuses this report, or nil when it takes it. Times are checked against `now` (the server's):
    /// an event more than a day away from it on the server's clock is refused.
    public func problem(now: Int64) -> String? {
        guard !callId.isEmpty, callId.utf8.count <= 128 else { return "\"callId\" must be 1-128 characters" }
        if let problem = PushDevice.deviceIdProblem(device, field: "device") { return problem }
        guard abs(clock.offsetMillis) <= Self.maxOffsetMillis else {
            return "\"clock.offsetMillis\" must be within a day either way"
        }
        guard (0...Self.maxErrorMillis).contains(clock.errorMillis) else {
            return "\"clock.errorMillis\" must be 0 to \(Self.maxErrorMillis)"
        }
        guard events.count <= Self.maxEvents else { return "at most \(Self.maxEvents) events" }
        for (index, event) in events.enumerated() {
            guard SignalProtocol.isValidUserId(event.name) else {
                return "events[\(index)].name must be 1-64 characters of A-Z a-z 0-9 . _ -"
            }
            guard abs(clock.serverTime(ofLocal: event.at) - now) <= Self.maxOffsetMillis else {
                return "events[\(index)].at is more than a day from now"
            }
            if let detail = event.detail, detail.count > Self.maxDetailLength {
                return "events[\(index)].detail is longer than \(Self.maxDetailLength) characters"
            }
        }
        guard quality.count <= Self.maxQualitySamples else {
            return "at most \(Self.maxQualitySamples) quality samples"
        }
        for (index, sample) in quality.enumerated() {
            guard abs(clock.serverTime(ofLocal: sample.at) - now) <= Self.maxOffsetMillis else {
                return "quality[\(index)].at is more than a day from now"
            }
            if let problem = sample.quality.problem { return "quality[\(index)]: \(problem)" }
        }
        return nil
    }
}
