/// The media engine seam: what the call flow needs from an RTC SDK.
///
/// An adapter to a real SDK maps each method to one SDK call and each SDK callback to one
/// ``RTCEngineEvent``. All methods return at once; outcomes arrive as events, delivered to every listener
/// (``addEventListener(_:)``). `docs/rtc-adapters.md` shows an adapter over an Agora-shaped SDK.
///
/// ## Channels
/// An engine is in at most one *call channel* (``joinChannel(_:token:uid:media:)``), the one CallAPI joins
/// and leaves, and in any number of *secondary channels* the app joins beside it
/// (``joinSecondaryChannel(_:token:uid:media:)``), such as the showroom a host live-streams in. Each is
/// named by its channel; every channel event says which channel it is about.
///
/// ## Listeners
/// CallAPI adds its own listener in `initialize` and removes it in `deinitialize`; apps add theirs beside
/// it. Listeners are called one after another, in the order they were added, on the thread the engine
/// reports from (each conformer documents which). A listener may call the engine and add or remove
/// listeners; such changes apply from the next event.
public protocol CallRTCEngine: AnyObject, Sendable {
    /// Adds `listener` of every event of this engine; keep the token to remove it.
    @discardableResult
    func addEventListener(_ listener: @escaping @Sendable (RTCEngineEvent) -> Void) -> RTCEventListenerToken
    /// Removes the listener `token` names; an unknown token is ignored. A listener removed while an event
    /// is being delivered may still get that event.
    func removeEventListener(_ token: RTCEventListenerToken)
    /// Joins `channel` as `uid` with `token`, publishing and subscribing as `media` says, as the call channel
    /// (leaving the call channel it was in, if any).
    /// Success is ``RTCEngineEvent/localJoined(channel:uid:)``; failure ``RTCEngineEvent/joinFailed(channel:code:message:)``.
    func joinChannel(_ channel: String, token: String, uid: UInt, media: RTCMediaOptions)
    /// Changes what is published and subscribed in the call channel.
    func updateMedia(_ media: RTCMediaOptions)
    /// Leaves the call channel, if any. Reports ``RTCEngineEvent/localLeft(channel:)`` when it was in one.
    func leaveChannel()
    /// Joins `channel` beside the call channel, with the same events as ``joinChannel(_:token:uid:media:)``.
    /// Joining the call channel or leaving it does not touch secondary channels. Joining a channel the
    /// engine is already in (as call or secondary channel) fails with
    /// ``RTCEngineEvent/joinFailed(channel:code:message:)``.
    func joinSecondaryChannel(_ channel: String, token: String, uid: UInt, media: RTCMediaOptions)
    /// Changes what is published and subscribed in the secondary channel `channel` (staying joined).
    /// The others in it get ``RTCEngineEvent/remotePublishingChanged(channel:uid:audio:video:)``.
    func updateSecondaryChannelMedia(_ channel: String, media: RTCMediaOptions)
    /// Leaves the secondary channel `channel`, if in it; reports ``RTCEngineEvent/localLeft(channel:)``.
    func leaveSecondaryChannel(_ channel: String)
    /// Sets how loud `uid` is played in the call channel, 0 (muted) to 100.
    func setRemotePlaybackVolume(_ volume: Int, uid: UInt)
    /// Renders the local camera into `view`, or stops rendering when `nil`.
    func setLocalCanvas(_ view: (any CallCanvas)?)
    /// Renders `uid`'s video into `view`, or stops rendering when `nil`.
    func setRemoteCanvas(_ view: (any CallCanvas)?, uid: UInt)
    /// Starts the local camera preview.
    func startPreview()
    /// Stops the local camera preview.
    func stopPreview()
    /// Replaces the token of the call channel.
    func renewToken(_ token: String)
    /// Wall-clock time in milliseconds since 1970, from NTP where the engine has it.
    func ntpWallTimeMillis() -> UInt64
}

extension CallRTCEngine {
    /// Adds `listener` of the events of `channel` and of the engine-wide events that name no channel
    /// (``RTCEngineEvent/channel`` is `nil`: camera capture, engine errors).
    ///
    /// This is how an app listens to the call's channel, as 2.x apps did with `addDelegateEx` on the call's
    /// connection: on ``CallEvent/joinRTCStart``, add a listener for ``CallApiImpl/getRoomId()``; remove it on
    /// ``CallEvent/localLeft``.
    @discardableResult
    public func addEventListener(
        channel: String, _ listener: @escaping @Sendable (RTCEngineEvent) -> Void
    ) -> RTCEventListenerToken {
        addEventListener { event in
            if let eventChannel = event.channel, eventChannel != channel { return }
            listener(event)
        }
    }
}

/// What to publish and subscribe in a channel.
public struct RTCMediaOptions: Sendable, Equatable {
    public var publishMicrophone: Bool
    public var publishCamera: Bool
    public var subscribeAudio: Bool
    public var subscribeVideo: Bool

    public init(publishMicrophone: Bool, publishCamera: Bool, subscribeAudio: Bool, subscribeVideo: Bool) {
        self.publishMicrophone = publishMicrophone
        self.publishCamera = publishCamera
        self.subscribeAudio = subscribeAudio
        self.subscribeVideo = subscribeVideo
    }

    /// Publish the microphone (and the camera for video) and subscribe to everything.
    public static func call(_ type: CallType) -> RTCMediaOptions {
        RTCMediaOptions(
            publishMicrophone: true, publishCamera: type == .video, subscribeAudio: true, subscribeVideo: true)
    }

    /// Publish camera and microphone, subscribe to nothing: a host live-streaming to an audience.
    public static let broadcast = RTCMediaOptions(
        publishMicrophone: true, publishCamera: true, subscribeAudio: false, subscribeVideo: false)

    /// Subscribe to everything, publish nothing: a viewer in an audience.
    public static let audience = RTCMediaOptions(
        publishMicrophone: false, publishCamera: false, subscribeAudio: true, subscribeVideo: true)

    /// These options with publishing switched off (subscriptions kept).
    public var withoutPublishing: RTCMediaOptions {
        var options = self
        options.publishMicrophone = false
        options.publishCamera = false
        return options
    }
}

/// An opaque view an engine renders into (a `UIView`, an `NSView`, a window handle...).
/// Apps conform their view type: `extension UIView: CallCanvas {}`.
public protocol CallCanvas: AnyObject, Sendable {}
