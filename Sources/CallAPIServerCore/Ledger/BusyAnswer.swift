import CallAPISignalProtocol

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The reject a busy callee's own client would send (docs/spec/wire-format.md: `rejectByInternal` 1 and the exact
/// reason text apps match on), written by the server on the callee's behalf.
package enum BusyAnswer {
    /// The reason text the deployed clients send and apps match on.
    package static let reason = "The user is currently busy"

    /// The reject for the call `callId` from `callee` (a CallAPI user id: decimal digits), or `nil` when `callee`
    /// is not one (the reject could not carry a valid `fromUserId`).
    package static func body(callId: String, callee: String, now: Int64) -> String? {
        guard let calleeId = UInt(callee) else { return nil }
        // Built by hand in a fixed key order; the only strings are the callId (escaped) and constants.
        // Encoding a string cannot fail.
        let escapedCallId = String(decoding: (try? JSONEncoder().encode(callId)) ?? Data("\"\"".utf8), as: UTF8.self)
        return "{\"message_action\":3,\"message_version\":\"1.0\",\"message_timestamp\":\(now),"
            + "\"fromUserId\":\(calleeId),\"callId\":\(escapedCallId),\"rejectReason\":\"\(reason)\","
            + "\"rejectByInternal\":1}"
    }
}
