import CallAPIServerCore
import CallAPISignalProtocol
import Foundation

/// A mailbox notification's payload: the rows one forward wrote for the node, as JSON (`MailboxStatements.Forward`
/// builds it), for ``MailboxDeliveries`` to deliver without reading them. Empty when they did not fit.
enum MailboxNotice {
    /// PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more.
    static let maxBytes = 7_900

    private struct Row: Decodable {
        let i: Int64
        let u: String
        let f: String
        let c: String?
        let b: String
        let s: Int64
        let m: String
        let h: Bool
        let d: String?
        let p: String?
    }

    /// The rows in `payload` for `node`, oldest first; `nil` when it carries none (too large, or not readable: the
    /// read brings them then).
    static func rows(_ payload: String, node: String) -> [(id: Int64, envelope: ClusterEnvelope)]? {
        guard !payload.isEmpty, let rows = try? JSONDecoder().decode([Row].self, from: Data(payload.utf8)) else {
            return nil
        }
        return rows.map { row in
            (
                row.i,
                ClusterEnvelope(
                    node: node, userId: row.u, from: row.f, body: MessageBody(row.b), sentAt: row.s, messageId: row.m,
                    copyOf: row.c, held: row.h, device: row.d, settles: row.p.flatMap(ClusterStore.pushMark))
            )
        }
    }
}
