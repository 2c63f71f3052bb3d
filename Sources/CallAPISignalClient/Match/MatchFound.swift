import CallAPISignalProtocol

/// The match queue paired this user with another (``SignalClientEvent/matched(_:)``). The user who waited longer
/// is the ``MatchRole/caller`` and gets ``SignalClientEvent/callPlaced(_:)`` right after; the other is the
/// ``MatchRole/callee``, and the incoming call whose id is ``callId`` from ``peerId`` is the match's.
public struct MatchFound: Sendable, Equatable {
    public var matchId: String
    /// The user this one was paired with.
    public var peerId: String
    /// The tag both shared.
    public var tag: String
    /// The id of the call the server places for the match.
    public var callId: String
    public var role: MatchRole

    public init(matchId: String, peerId: String, tag: String, callId: String, role: MatchRole) {
        self.matchId = matchId
        self.peerId = peerId
        self.tag = tag
        self.callId = callId
        self.role = role
    }

    init(_ frame: ServerFrame.Matched) {
        self.init(matchId: frame.matchId, peerId: frame.peer, tag: frame.tag, callId: frame.callId, role: frame.role)
    }
}
