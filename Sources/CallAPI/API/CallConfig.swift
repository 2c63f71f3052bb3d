import Foundation

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
    /// Acknowledgements, retries and peer liveness between endpoints of this library.
    public var reliability: CallReliability
    /// Makes the `callId` of each call placed; a UUID by default. Tests pass a seeded one to replay runs.
    public var makeCallId: @Sendable () -> String

    public init(
        appId: String = "", userId: UInt, rtcEngine: any CallRTCEngine, signalClient: any ISignalClient,
        clock: any CallClock = SystemCallClock(), reliability: CallReliability = .standard,
        makeCallId: @escaping @Sendable () -> String = { UUID().uuidString }
    ) {
        self.appId = appId
        self.userId = userId
        self.rtcEngine = rtcEngine
        self.signalClient = signalClient
        self.clock = clock
        self.reliability = reliability
        self.makeCallId = makeCallId
    }
}
