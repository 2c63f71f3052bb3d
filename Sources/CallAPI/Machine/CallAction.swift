/// What the state machine asks its shell to do, in order.
package enum CallAction: Sendable, Equatable {
    /// The endpoint is initialized: from now on, feed the RTC engine's events in as inputs.
    case attach
    /// The endpoint is prepared for the first time since it was initialized: from now on, feed the signaling
    /// channel's messages in as inputs. Not at initialize: apps often log in to their signaling first, and a call
    /// that reached the channel before the app prepared (a held call delivered at login, after a push woke the
    /// app) is then handed over now, when it can ring, rather than ignored as received before prepare.
    case listen
    /// The endpoint is deinitialized: stop feeding them, and cancel every timer still running.
    case detach
    /// Send `message` to `to`. When `completesRequest`, the request being handled completes with the send's
    /// outcome; the outcome also comes back as ``CallInput/sendFinished(_:to:error:)``.
    case send(CallMessage, to: UInt, completesRequest: Bool)
    /// Complete the request being handled (`nil` = success).
    case completeRequest(CallAPIError?)
    case joinRTC(RTCJoin)
    /// The engine is already in `channel` (pre-joined): set up preview and canvases as ``joinRTC(_:)`` does
    /// and publish and subscribe as `media` says.
    case publishInJoinedRTC(RTCJoin)
    /// Ask `provider` (the prepare config's) for a token for `channel`; answer with
    /// ``CallInput/rtcTokenFetched(callId:outcome:)``.
    case fetchRTCToken(callId: String, channel: String, uid: UInt, provider: TokenProviderRef)
    /// Stop preview, release both canvases and leave the channel.
    case leaveRTC(remoteUid: UInt?)
    case setRemoteVolume(uid: UInt, volume: Int)
    case renewRTCToken(String)
    /// Start (or restart) a timer; when it falls due, feed ``CallInput/timerFired(_:)``.
    case startTimer(CallTimerID, millis: Int64)
    case stopTimer(CallTimerID)
    /// Ask the listeners `canJoinRtcOnCalling` and answer with ``CallInput/earlyJoinDecided(callId:allowed:)``.
    case askCanJoinOnCalling(callId: String, eventInfo: EventInfo)
    case notifyState(CallStateChange)
    case notifyEvent(CallEvent, reason: String?)
    case notifyError(CallErrorEvent, CallErrorCodeType, code: Int, message: String)
    /// `onCallConnected`; the shell adds the NTP timestamp.
    case notifyConnected(roomId: String, callerId: UInt, selfId: UInt)
    /// `onCallDisconnected`; the shell adds the NTP timestamp.
    case notifyDisconnected(roomId: String, hangupUserId: UInt, selfId: UInt, durationMillis: Int64)
    case notifyTokenWillExpire
    case log(CallLogLevel, String)
}

extension CallAction {
    /// `notifyState` of a new state.
    static func stateChanged(
        _ state: CallStateType, _ reason: CallStateReason, eventReason: String = "", info: EventInfo = EventInfo()
    ) -> CallAction {
        .notifyState(CallStateChange(state: state, reason: reason, eventReason: eventReason, info: info))
    }
}

/// How to join a call's channel.
package struct RTCJoin: Sendable, Equatable {
    package var channel: String
    package var token: String
    package var uid: UInt
    package var remoteUid: UInt
    package var media: RTCMediaOptions
    package var localView: CanvasRef?
    package var remoteView: CanvasRef?
}

/// A canvas compared by identity, so actions stay `Equatable`.
package struct CanvasRef: Sendable, Equatable {
    package let view: any CallCanvas

    package init?(_ view: (any CallCanvas)?) {
        guard let view else { return nil }
        self.view = view
    }

    package static func == (lhs: CanvasRef, rhs: CanvasRef) -> Bool { lhs.view === rhs.view }
}

/// A token provider carried by an action. Closures cannot be compared, so any two are equal: actions are
/// compared by what they ask for.
package struct TokenProviderRef: Sendable, Equatable {
    package let provider: RTCTokenProvider

    package static func == (lhs: TokenProviderRef, rhs: TokenProviderRef) -> Bool { true }
}
