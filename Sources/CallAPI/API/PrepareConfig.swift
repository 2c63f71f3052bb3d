/// Fetches the RTC token for joining `channel` as `uid`, typically from the app's own server.
public typealias RTCTokenProvider = @Sendable (_ channel: String, _ uid: UInt) async throws -> String

/// What a ``CallApiImpl`` needs before calls: its room, token, views and call options.
public struct PrepareConfig: Sendable {
    /// The RTC channel of the calls this user places. Empty (the default): a fresh room for every call,
    /// named from this user's id and the call's id, so a past peer cannot come back to a room it knows.
    /// A fixed room is what the 1.x/2.x clients did; prefer the default.
    public var roomId: String
    /// The token for joining RTC channels when there is no ``rtcTokenProvider``: it must then be valid for
    /// any channel, since the rooms of incoming calls are not known in advance.
    public var rtcToken: String
    /// Asked for a token before every join, with the call's room: per-call tokens, each good for one room
    /// only. When set, ``rtcToken`` is not used. A provider that throws fails the call with
    /// `joinRTCFailed` (the peer is told).
    public var rtcTokenProvider: RTCTokenProvider?
    /// Where the local camera is shown.
    public var localView: (any CallCanvas)?
    /// Where the peer's video is shown.
    public var remoteView: (any CallCanvas)?
    /// How long a call may ring (and connect) before it is cancelled; 0 means no timer.
    public var callTimeoutMillisecond: UInt64
    /// When true, a call is connected as soon as both sides accept, without waiting for the first frame.
    public var firstFrameWaittingDisabled: Bool
    /// When true, this user joins the room of the next call it will place as soon as it is prepared (after
    /// `prepareForCall`, and again after each call), publishing nothing, so that `call()` finds the room
    /// joined and only starts publishing: the join's latency leaves the call setup. Off by default: the
    /// engine then sits in a room while no call is placed, which costs media minutes on billed services.
    /// Rooms are still fresh per call (named from the next call's id) unless ``roomId`` is set.
    public var preJoinsCallRoom: Bool
    /// Sent to the peer with every call message as `fromUserExtension`; JSON values only.
    public var userExtension: [String: Any]? {
        get { userExtensionJSON.map { $0.mapValues(\.anyValue) } }
        set {
            guard let newValue else {
                userExtensionJSON = nil
                invalidExtensionKeys = []
                return
            }
            invalidExtensionKeys = JSONValue.invalidKeys(in: newValue)
            userExtensionJSON = JSONValue.object(from: newValue.filter { JSONValue(any: $0.value) != nil })
        }
    }
    /// ``userExtension`` as JSON.
    package var userExtensionJSON: [String: JSONValue]?
    /// Keys of ``userExtension`` whose values JSON cannot carry; `prepareForCall` refuses the config then.
    package private(set) var invalidExtensionKeys: [String] = []

    public init(
        roomId: String = "", rtcToken: String = "", localView: (any CallCanvas)? = nil,
        remoteView: (any CallCanvas)? = nil, callTimeoutMillisecond: UInt64 = 15_000,
        firstFrameWaittingDisabled: Bool = false, userExtension: [String: Any]? = nil,
        rtcTokenProvider: RTCTokenProvider? = nil, preJoinsCallRoom: Bool = false
    ) {
        self.preJoinsCallRoom = preJoinsCallRoom
        self.roomId = roomId
        self.rtcToken = rtcToken
        self.rtcTokenProvider = rtcTokenProvider
        self.localView = localView
        self.remoteView = remoteView
        self.callTimeoutMillisecond = callTimeoutMillisecond
        self.firstFrameWaittingDisabled = firstFrameWaittingDisabled
        self.userExtension = userExtension
    }
}
