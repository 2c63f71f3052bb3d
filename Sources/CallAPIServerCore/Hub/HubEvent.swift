import CallAPISignalProtocol

/// Something that happened to the hub. The time it happened is the `now` of ``HubState/handle(_:now:)``.
package enum HubEvent: Sendable {
    /// A WebSocket connection opened.
    case connected(SessionID)
    /// A session sent a frame that decoded and fits the size limit.
    case frame(SessionID, ClientFrame)
    /// A session sent text that is not a frame.
    case undecodable(SessionID, FrameDecodingError)
    /// A session sent a frame over the size limit; `requestId` and `isSend` when they could be read.
    case oversized(SessionID, bytes: Int, requestId: Int?, isSend: Bool)
    /// A session sent a binary message.
    case binary(SessionID)
    /// The token of a `login` or `renew` was checked (see ``HubAction/verifyToken(_:requestId:token:purpose:)``).
    case tokenChecked(SessionID, requestId: Int?, purpose: TokenPurpose, result: TokenCheck)
    /// The session's writer wrote `frames` more frames to its socket (the oldest queued ones).
    case written(SessionID, frames: Int)
    /// The call ledger answers the session's `send` on its target's behalf with `body` (a busy reject) instead of
    /// relaying it.
    case answeredOnBehalf(SessionID, ClientFrame.Send, body: String)
    /// The call ledger ended a ring neither side spoke of for the ring window: tell both sides.
    case ringAbandoned(AbandonedRing)
    /// The call ledger's answer to a session's `calls` request (``HubAction/queryCalls(_:userId:_:)``).
    case ledgerAnswered(SessionID, ServerFrame)
    /// The connection closed.
    case disconnected(SessionID)
    /// Time passed: expire tokens, held messages, idle and unauthenticated sessions.
    case tick
    /// The server is shutting down: tell everyone and close.
    case shutdown
    /// A push provider rejected `token` of `userId`'s device `deviceId` as no longer valid: remove the device.
    case pushRejected(userId: String, deviceId: String, token: String)
    /// The operator removes `userId`'s device `deviceId`.
    case removeDevice(userId: String, deviceId: String)
    /// The business server asks for a call with the server-made `callId` (docs/match.md).
    case placeCall(PlaceCallOrder, callId: String)
    /// The cluster link reports (only on a node of a cluster).
    case cluster(ClusterEvent)
}

/// What a checked token is for.
package enum TokenPurpose: Sendable, Equatable {
    case login
    case renew
}

/// The result of checking a token's signature and claims (not its expiry: the hub checks that against its
/// clock).
public enum TokenCheck: Sendable, Equatable {
    /// The token is genuine and names `userId`; it expires at `expiresAt` (ms since 1970).
    case valid(userId: String, expiresAt: Int64)
    /// The token is not acceptable.
    case invalid(SignalErrorCode, String)
}
