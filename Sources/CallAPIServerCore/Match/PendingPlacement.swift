import CallAPISignalProtocol

/// A server-placed call the server is waiting to see its caller place.
package struct PendingPlacement: Sendable, Equatable {
    /// Who asked for the call.
    enum Origin: Sendable, Equatable {
        /// `POST /v1/calls`.
        case businessServer
        /// The match queue paired the two users on `tag`.
        case match(matchId: String, tag: String)
    }

    var callId: String
    var caller: String
    var callerSession: SessionID
    var callee: String
    var media: CallMedia
    var origin: Origin
    /// The caller's call message must pass through the hub before this time.
    var deadline: Int64

    /// The frame that tells the caller's client to place the call.
    var frame: ServerFrame {
        let (matchId, tag): (String?, String?) =
            switch origin {
            case .businessServer: (nil, nil)
            case .match(let matchId, let tag): (matchId, tag)
            }
        return .placeCall(.init(callId: callId, callee: callee, video: media == .video, matchId: matchId, tag: tag))
    }

    func notPlaced(_ reason: String) -> NotPlacedCall {
        let matchId: String? = if case .match(let matchId, _) = origin { matchId } else { nil }
        return NotPlacedCall(
            callId: callId, caller: caller, callee: callee, media: media, matchId: matchId, reason: reason)
    }
}
