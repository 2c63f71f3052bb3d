/// What a ``CallApiImpl`` needs before calls: its room, token, views and call options.
public struct PrepareConfig: Sendable {
    /// This user's own RTC channel; a call this user places happens there.
    public var roomId: String
    /// The token for joining RTC channels.
    public var rtcToken: String
    /// Where the local camera is shown.
    public var localView: (any CallCanvas)?
    /// Where the peer's video is shown.
    public var remoteView: (any CallCanvas)?
    /// How long a call may ring (and connect) before it is cancelled; 0 means no timer.
    public var callTimeoutMillisecond: UInt64
    /// When true, a call is connected as soon as both sides accept, without waiting for the first frame.
    public var firstFrameWaittingDisabled: Bool
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
    public var userExtensionJSON: [String: JSONValue]?
    /// Keys of ``userExtension`` whose values JSON cannot carry; `prepareForCall` refuses the config then.
    public private(set) var invalidExtensionKeys: [String] = []

    public init(
        roomId: String = "", rtcToken: String = "", localView: (any CallCanvas)? = nil,
        remoteView: (any CallCanvas)? = nil, callTimeoutMillisecond: UInt64 = 15_000,
        firstFrameWaittingDisabled: Bool = false, userExtension: [String: Any]? = nil
    ) {
        self.roomId = roomId
        self.rtcToken = rtcToken
        self.localView = localView
        self.remoteView = remoteView
        self.callTimeoutMillisecond = callTimeoutMillisecond
        self.firstFrameWaittingDisabled = firstFrameWaittingDisabled
        self.userExtension = userExtension
    }
}
