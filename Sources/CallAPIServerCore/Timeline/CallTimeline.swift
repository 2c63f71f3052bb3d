import CallAPISignalProtocol
import CallAPIWire

/// One call on one time line: the ledger's record (the server's clock) and each device's report, its marks moved
/// onto the server's clock by that device's offset and carrying its error bar (docs/timeline.md).
///
/// Only reports from the call's two users count once the record is known: a report from anyone else about the call
/// is left out (any logged-in user may report any call id; the view shows the call's own).
public struct CallTimeline: Sendable, Equatable, Codable {
    /// Whose marks: the server's record, or one device of one user.
    public struct Lane: Sendable, Equatable, Codable {
        /// `server`, or `user/device`.
        public var name: String
        public var userId: String?
        public var device: String?
        /// The device's clock against the server's (absent for the server).
        public var clock: ClockOffset?
    }

    /// One mark on the server's clock.
    public struct Entry: Sendable, Equatable, Codable {
        /// The lane's name.
        public var lane: String
        public var name: String
        /// Milliseconds since 1970, server clock.
        public var at: Int64
        /// ± this many milliseconds (the lane's clock error; 0 for the server's own marks).
        public var errorMillis: Int64
        public var detail: String?
    }

    /// One period's quality as a device measured it, on the server's clock.
    public struct QualityEntry: Sendable, Equatable, Codable {
        public var lane: String
        /// The end of the period, server clock.
        public var at: Int64
        public var errorMillis: Int64
        /// Whose media it measures.
        public var peer: UInt
        public var quality: RTCQuality
    }

    /// A stage's latency on one device (``CallStage``).
    public struct StageLatency: Sendable, Equatable, Codable {
        public var lane: String
        public var stage: CallStage
        public var millis: Int64
    }

    public var callId: String
    public var record: CallRecord?
    public var lanes: [Lane]
    /// Every mark, by time (server marks first among equals, then lanes in order).
    public var entries: [Entry]
    public var stages: [StageLatency]
    /// Each device's quality samples, by lane then time.
    public var quality: [QualityEntry]

    public init(callId: String, record: CallRecord?, reports: [StoredCallReport]) {
        self.callId = callId
        self.record = record
        let participants = record.map { Set([$0.caller, $0.callee]) }
        let kept = reports.filter { participants?.contains($0.userId) ?? true }
        var lanes: [Lane] = []
        var entries: [Entry] = []
        var stages: [StageLatency] = []
        var quality: [QualityEntry] = []
        if let record {
            lanes.append(Lane(name: "server"))
            let marks: [(String, Int64?, String?)] = [
                ("ledger.started", record.startedAt, nil), ("ledger.rang", record.rangAt, nil),
                ("ledger.accepted", record.acceptedAt, nil), ("ledger.connected", record.connectedAt, nil),
                (
                    "ledger.ended", record.endedAt,
                    "\(record.outcome.rawValue), \(record.endReason)" + (record.endedBy.map { " by \($0)" } ?? "")
                ),
            ]
            for case let (name, at?, detail) in marks {
                entries.append(Entry(lane: "server", name: name, at: at, errorMillis: 0, detail: detail))
            }
        }
        for stored in kept.sorted(by: { ($0.userId, $0.report.device) < ($1.userId, $1.report.device) }) {
            let report = stored.report
            let lane = "\(stored.userId)/\(report.device)"
            lanes.append(Lane(name: lane, userId: stored.userId, device: report.device, clock: report.clock))
            for mark in report.events {
                entries.append(
                    Entry(
                        lane: lane, name: mark.name, at: report.clock.serverTime(ofLocal: mark.at),
                        errorMillis: report.clock.errorMillis, detail: mark.detail))
            }
            quality += report.quality.map {
                QualityEntry(
                    lane: lane, at: report.clock.serverTime(ofLocal: $0.at), errorMillis: report.clock.errorMillis,
                    peer: $0.peer, quality: $0.quality)
            }
            stages += CallStage.latencies(in: report).map {
                StageLatency(lane: lane, stage: $0.stage, millis: $0.millis)
            }
        }
        let order = Dictionary(uniqueKeysWithValues: lanes.enumerated().map { ($1.name, $0) })
        // Stable: marks of one lane at one time keep the order the device saw them in.
        self.entries = entries.enumerated().sorted { a, b in
            (a.element.at, order[a.element.lane] ?? 0, a.offset) < (b.element.at, order[b.element.lane] ?? 0, b.offset)
        }.map(\.element)
        self.lanes = lanes
        self.stages = stages
        self.quality = quality
    }
}
