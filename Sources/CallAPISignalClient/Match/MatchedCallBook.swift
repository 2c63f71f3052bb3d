import CallAPI

/// Which incoming calls the match queue vouched for, so that a callee who opted in accepts exactly those
/// (docs/match.md). The server's `matched` frame and the call itself arrive by two paths (the client's events and
/// CallAPI's state), in either order; the book answers the peer to accept once both agree on call id and caller.
struct MatchedCallBook: Sendable {
    /// Matches this user is the callee of, newest last (bounded: a match whose call never came is forgotten).
    private(set) var expected: [(callId: String, peer: String)] = []
    /// The incoming call ringing now, if any.
    private(set) var ringing: (callId: String, caller: String)?
    static let maxExpected = 16

    /// A match was made; returns the peer to accept if its call already rings.
    mutating func matched(_ match: MatchFound) -> String? {
        guard match.role == .callee else { return nil }
        expected.append((match.callId, match.peerId))
        if expected.count > Self.maxExpected { expected.removeFirst(expected.count - Self.maxExpected) }
        return acceptable()
    }

    /// CallAPI's state changed; returns the peer to accept if a matched call now rings.
    mutating func stateChanged(_ change: CallStateChange) -> String? {
        guard change.state == .calling, case .string(let callId)? = change.eventInfo[kCallId],
            case .int(let from)? = change.eventInfo[kFromUserId]
        else {
            ringing = nil
            return nil
        }
        ringing = (callId, String(from))
        return acceptable()
    }

    /// The caller of the ringing call when a match vouches for it (and forgets the match: it is accepted once).
    private mutating func acceptable() -> String? {
        guard let ringing, let index = expected.firstIndex(where: { $0 == (ringing.callId, ringing.caller) })
        else { return nil }
        expected.remove(at: index)
        return ringing.caller
    }
}
