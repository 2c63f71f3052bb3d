import CallAPIServerCore
import CallAPISignalProtocol

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// Call reports (docs/timeline.md): one row per call, user and device, the report as JSON. Deleted with the calls
// past the retention, by when they arrived.
extension SQLLedgerStore {
    package func saveReport(_ report: StoredCallReport) async throws -> Bool {
        let p = Runner.placeholder
        let body = String(decoding: try JSONEncoder().encode(report.report), as: UTF8.self)
        // One statement, so that it needs no transaction of its own (SQLite's one connection runs the ledger
        // writer's) and two reports arriving together cannot both pass the count.
        let kept = try await runner.run(
            "INSERT INTO call_reports (call_id, user_id, device_id, received_at, body) "
                + "SELECT \(p(1)), \(p(2)), \(p(3)), \(p(4)), \(p(5)) WHERE (SELECT COUNT(*) FROM call_reports "
                + "WHERE call_id = \(p(1)) AND NOT (user_id = \(p(2)) AND device_id = \(p(3)))) < \(p(6)) "
                + "ON CONFLICT (call_id, user_id, device_id) "
                + "DO UPDATE SET received_at = excluded.received_at, body = excluded.body RETURNING call_id",
            [
                .text(report.report.callId), .text(report.userId), .text(report.report.device),
                .integer(report.receivedAt), .text(body), .integer(Int64(StoredCallReport.maxPerCall)),
            ])
        return !kept.isEmpty
    }

    package func reports(callId: String) async throws -> [StoredCallReport] {
        let rows = try await runner.run(
            "SELECT user_id, received_at, body FROM call_reports WHERE call_id = \(Runner.placeholder(1)) "
                + "ORDER BY received_at, user_id, device_id", [.text(callId)])
        return try rows.map { row in
            guard let userId = row["user_id"]?.text, let receivedAt = row["received_at"]?.integer,
                let body = row["body"]?.text
            else { throw LedgerStoreError("a call_reports row lacks a column") }
            let report = try JSONDecoder().decode(CallReport.self, from: Data(body.utf8))
            return StoredCallReport(userId: userId, receivedAt: receivedAt, report: report)
        }
    }
}
