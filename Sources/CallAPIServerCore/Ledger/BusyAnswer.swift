import CallAPIWire

/// The reject a busy callee's own client would send (docs/spec/wire-format.md: `rejectByInternal` 1 and the exact
/// reason text apps match on), written by the server on the callee's behalf.
package enum BusyAnswer {
    /// The reason text the deployed clients send and apps match on.
    package static let reason = "The user is currently busy"

    /// The reject for the call `callId` from `callee` (a CallAPI user id: decimal digits), or `nil` when `callee`
    /// is not one (the reject could not carry a valid `fromUserId`).
    package static func body(callId: String, callee: String, now: Int64) -> String? {
        OnBehalfMessage.body(.reject, callId: callId, from: callee, now: now) { reject in
            reject.member(CallMessageKey.rejectReason.spelling, reason)
            reject.member(CallMessageKey.rejectByInternal.spelling, 1)
        }
    }
}
