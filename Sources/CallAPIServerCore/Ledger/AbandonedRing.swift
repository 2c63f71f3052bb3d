import CallAPIWire

/// A ringing call the ledger ended because neither side said anything about it for the ring window (both clients
/// silent: hung, cut off, or without a ring timer of their own). The server tells each side, on the other's
/// behalf, the cancel a timed-out ring sends (`cancelCallByInternal` 1), so that every client, ours and the
/// deployed ones, ends the call as a ring timeout (`remoteCallingTimeout`).
package struct AbandonedRing: Sendable, Equatable {
    package var callId: String
    package var caller: String
    package var callee: String
    /// The device id the caller's client sent with the call, if it sent one: the callee's client takes the call's
    /// messages only from that device, so the cancel written for the caller carries it.
    package var callerDevice: String?

    package init(callId: String, caller: String, callee: String, callerDevice: String? = nil) {
        self.callId = callId
        self.caller = caller
        self.callee = callee
        self.callerDevice = callerDevice
    }

    /// The messages that end it, in order: the callee's from the caller, then the caller's from the callee. A side
    /// whose peer is not a CallAPI user id (its `fromUserId` could not be written) is told nothing.
    package func cancels(now: Int64) -> [(from: String, to: String, body: String)] {
        // No callee device: before an accept the caller has bound the call to none of the callee's devices.
        [(caller, callee, callerDevice), (callee, caller, nil)].compactMap { from, to, device in
            Self.cancel(callId: callId, from: from, device: device, now: now).map { (from, to, $0) }
        }
    }

    /// A timed-out ring's cancel of `callId` from `user` (its device `device`).
    static func cancel(callId: String, from user: String, device: String?, now: Int64) -> String? {
        OnBehalfMessage.body(.cancelCall, callId: callId, from: user, now: now) { cancel in
            cancel.member(CallMessageKey.cancelCallByInternal.spelling, 1)
            cancel.member(CallMessageKey.deviceId.spelling, device)
        }
    }
}
