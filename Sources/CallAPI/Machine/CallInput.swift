/// Everything that can happen to a call endpoint, as the state machine sees it.
package enum CallInput: Sendable {
    // Local requests.
    case initialize(userId: UInt, reliability: CallReliability = .standard)
    case deinitialize
    case prepare(PrepareConfig)
    /// `callId` is made by the shell (a UUID) so the machine stays deterministic.
    case call(remoteUserId: UInt, type: CallType, extension: [String: JSONValue]?, callId: String)
    case cancel
    case accept(remoteUserId: UInt)
    case reject(remoteUserId: UInt, reason: String?)
    case hangup(remoteUserId: UInt, reason: String?)
    case renewToken(String)

    // From the signaling channel.
    case received(text: String, sender: SignalSender?)
    /// The outcome of a `.send` action; `error` is the channel's `(code, message)` when it failed.
    case sendFinished(CallMessage, to: UInt, error: SendFailure?)

    // From the RTC engine, the timer and the listeners.
    case rtc(RTCEngineEvent)
    /// A timer (``CallTimerID``) fell due.
    case timerFired(CallTimerID)
    /// The listeners' answer to `.askCanJoinOnCalling`.
    case earlyJoinDecided(callId: String, allowed: Bool)
    /// The token provider's answer to `.fetchRTCToken`: the token, or why there is none.
    case rtcTokenFetched(callId: String, outcome: Result<String, CallAPIError>)
    /// Join the room of the next call, to be named from `callId`, ahead of the call: fed by the shell when
    /// ``CallStateMachine/wantsPreJoin``.
    case preJoin(callId: String)
}

/// Why the signaling channel could not send a message.
package struct SendFailure: Sendable, Equatable {
    package var code: Int
    package var message: String

    package init(code: Int, message: String) {
        self.code = code
        self.message = message
    }
}
