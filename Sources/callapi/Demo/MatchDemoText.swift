import CallAPI
import Foundation

/// The text `callapi demo --scenario match` prints for its outcome.
enum MatchDemoText {
    static func render(_ outcome: MatchDemoRun.Outcome) -> String {
        var lines: [String] = []
        for user in outcome.timelines.keys.sorted() {
            lines.append("── user \(user) " + String(repeating: "─", count: 40))
            for line in outcome.timelines[user] ?? [] {
                lines.append(String(format: "%6lld ms  %@", line.offsetMillis, line.text))
            }
            lines.append("")
        }
        for user in outcome.finalStates.keys.sorted() {
            if let (state, reason) = outcome.finalStates[user] {
                lines.append("user \(user) ended \(state)(\(reason))")
            }
        }
        if let record = outcome.record {
            lines.append(
                "server ledger: call \(record.callId) \(record.caller) → \(record.callee) \(record.outcome.rawValue), "
                    + "\(record.durationMillis) ms connected")
        }
        lines.append("still waiting in the match queue: \(outcome.waitingAtEnd) user(s)")
        return lines.joined(separator: "\n")
    }
}
