/// What the state machine asks its shell to do, in order.
package enum CallAction: Sendable, Equatable {
    /// Send `message` to `to`. When `completesRequest`, the request being handled completes with the send's
    /// outcome; the outcome also comes back as ``CallInput/sendFinished(_:to:error:)``.
    case send(CallMessage, to: UInt, completesRequest: Bool)
    /// Complete the request being handled (`nil` = success).
    case completeRequest(CallAPIError?)
    case joinRTC(RTCJoin)
    /// The engine is already in `channel` (pre-joined): set up preview and canvases as ``joinRTC(_:)`` does
    /// and publish and subscribe as `media` says.
    case publishInJoinedRTC(RTCJoin)
    /// Ask the prepare config's token provider for a token for `channel`; answer with
    /// ``CallInput/rtcTokenFetched(callId:outcome:)``.
    case fetchRTCToken(callId: String, channel: String, uid: UInt)
    /// Stop preview, release both canvases and leave the channel.
    case leaveRTC(remoteUid: UInt?)
    case setRemoteVolume(uid: UInt, volume: Int)
    case renewRTCToken(String)
    case startRingTimer(callId: String, millis: Int64)
    case stopRingTimer
    /// Start (or restart) a reliability timer; when it falls due, feed ``CallInput/timerFired(_:)``.
    case startTimer(CallTimerID, millis: Int64)
    case stopTimer(CallTimerID)
    /// Ask the listeners `canJoinRtcOnCalling` and answer with ``CallInput/earlyJoinDecided(callId:allowed:)``.
    case askCanJoinOnCalling(callId: String, eventInfo: [String: JSONValue])
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
