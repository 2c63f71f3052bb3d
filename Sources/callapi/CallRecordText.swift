import CallAPISignalProtocol
import Foundation

/// One line per ledger call, for `callapi calls` and the phone's `history`.
enum CallRecordText {
    /// `2026-11-23 13:45:01 UTC  video  1001 -> 1002  completed  1m05s  (ended by 1002: hangup)`.
    static func line(_ record: CallRecord) -> String {
        let duration = record.durationMillis > 0 ? "  \(formatDuration(record.durationMillis))" : ""
        let ender = record.endedBy.map { "ended by \($0): " } ?? ""
        return "\(timestamp(record.startedAt))  \(record.media.rawValue)  \(record.caller) -> \(record.callee)  "
            + "\(record.outcome.rawValue)\(duration)  (\(ender)\(TerminalText.escaped(record.endReason)))"
    }

    static func timestamp(_ millis: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }

    static func formatDuration(_ millis: Int64) -> String {
        let seconds = millis / 1000
        return seconds >= 60 ? "\(seconds / 60)m\(String(format: "%02d", seconds % 60))s" : "\(seconds)s"
    }
}
