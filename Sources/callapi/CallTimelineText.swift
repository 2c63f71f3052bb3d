import CallAPIServerCore
import CallAPISignalProtocol

/// A call's merged time line as text, for `callapi calls show`.
enum CallTimelineText {
    /// The record's line, the lanes with their clocks, one line per mark from the first (`+1.234 s`), and each
    /// device's stage latencies.
    static func lines(_ timeline: CallTimeline) -> [String] {
        var lines: [String] = []
        if let record = timeline.record {
            lines.append("call \(timeline.callId)  " + CallRecordText.line(record))
        } else {
            lines.append("call \(timeline.callId)  (no ledger record: only its reports)")
        }
        for lane in timeline.lanes {
            if let clock = lane.clock {
                let sign = clock.offsetMillis >= 0 ? "+" : ""
                lines.append(
                    "lane \(TerminalText.escaped(lane.name)): clock \(sign)\(clock.offsetMillis) ms ± "
                        + "\(clock.errorMillis) ms (\(clock.samples) samples)")
            } else {
                lines.append("lane \(lane.name): the server's clock")
            }
        }
        let width = timeline.lanes.map(\.name.count).max() ?? 6
        let start = timeline.entries.first?.at ?? 0
        for entry in timeline.entries {
            let offset = entry.at - start
            let millis = String(offset % 1000)
            let seconds = "+\(offset / 1000).\(String(repeating: "0", count: 3 - millis.count))\(millis) s"
            let error = entry.errorMillis > 0 ? " ±\(entry.errorMillis) ms" : ""
            let detail = entry.detail.map { " (\(TerminalText.escaped($0)))" } ?? ""
            let lane = TerminalText.escaped(entry.lane)
            lines.append(
                String(repeating: " ", count: max(0, 10 - seconds.count)) + seconds + "  " + lane
                    + String(repeating: " ", count: max(0, width - lane.count)) + "  \(entry.name)\(detail)\(error)")
        }
        for stage in timeline.stages {
            lines.append("stage \(TerminalText.escaped(stage.lane)) \(stage.stage.rawValue): \(stage.millis) ms")
        }
        return lines
    }
}
