/// What a ``CallApiImpl`` needs for its whole life: who this user is and the two seams.
public struct CallConfig: Sendable {
    /// The RTC app id (passed through to engines that need it).
    public var appId: String
    /// This user's id.
    public var userId: UInt
    /// The media engine.
    public var rtcEngine: any CallRTCEngine
    /// The signaling channel.
    public var signalClient: any ISignalClient
    /// Wall time and timers; tests pass a manual clock.
    public var clock: any CallClock

    public init(
        appId: String = "", userId: UInt, rtcEngine: any CallRTCEngine, signalClient: any ISignalClient,
        clock: any CallClock = SystemCallClock()
    ) {
        self.appId = appId
        self.userId = userId
        self.rtcEngine = rtcEngine
        self.signalClient = signalClient
        self.clock = clock
    }
}
