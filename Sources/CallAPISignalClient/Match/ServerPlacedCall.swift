import CallAPISignalProtocol

/// The server asks this client to place a call now (``SignalClientEvent/callPlaced(_:)``): the business server
/// asked for it (`POST /v1/calls`) or the match queue paired this user (docs/match.md). Only the server can send
/// this, so no other user can make this client call anyone.
public struct ServerPlacedCall: Sendable, Equatable {
    /// The id the call must use: the server already gave it to whoever asked for the call.
    public var callId: String
    /// The user to call.
    public var calleeId: String
    /// A video call (`false`: audio).
    public var video: Bool
    /// The match the call is for, when the match queue placed it.
    public var matchId: String?
    /// The tag the match was made on.
    public var tag: String?

    public init(callId: String, calleeId: String, video: Bool, matchId: String? = nil, tag: String? = nil) {
        self.callId = callId
        self.calleeId = calleeId
        self.video = video
        self.matchId = matchId
        self.tag = tag
    }

    init(_ frame: ServerFrame.PlaceCall) {
        self.init(
            callId: frame.callId, calleeId: frame.callee, video: frame.video, matchId: frame.matchId, tag: frame.tag)
    }
}
