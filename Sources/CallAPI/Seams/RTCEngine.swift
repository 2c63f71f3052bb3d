/// The media engine seam: what the call flow needs from an RTC SDK.
///
/// An adapter to a real SDK maps each method to one SDK call and each SDK callback to one
/// ``RTCEngineEvent``. All methods return at once; outcomes arrive as events through the handler.
public protocol CallRTCEngine: AnyObject, Sendable {
    /// Where the engine reports events. CallAPI sets it in `initialize` and clears it in `deinitialize`.
    func setEventHandler(_ handler: (@Sendable (RTCEngineEvent) -> Void)?)
    /// Joins `channel` as `uid` with `token`, publishing and subscribing as `media` says.
    /// Success is ``RTCEngineEvent/localJoined(channel:uid:)``; failure ``RTCEngineEvent/joinFailed(channel:code:message:)``.
    func joinChannel(_ channel: String, token: String, uid: UInt, media: RTCMediaOptions)
    /// Changes what is published and subscribed in the joined channel.
    func updateMedia(_ media: RTCMediaOptions)
    /// Leaves the joined channel, if any. Reports ``RTCEngineEvent/localLeft(channel:)`` when it was in one.
    func leaveChannel()
    /// Sets how loud `uid` is played, 0 (muted) to 100.
    func setRemotePlaybackVolume(_ volume: Int, uid: UInt)
    /// Renders the local camera into `view`, or stops rendering when `nil`.
    func setLocalCanvas(_ view: (any CallCanvas)?)
    /// Renders `uid`'s video into `view`, or stops rendering when `nil`.
    func setRemoteCanvas(_ view: (any CallCanvas)?, uid: UInt)
    /// Starts the local camera preview.
    func startPreview()
    /// Stops the local camera preview.
    func stopPreview()
    /// Replaces the token of the joined channel.
    func renewToken(_ token: String)
    /// Wall-clock time in milliseconds since 1970, from NTP where the engine has it.
    func ntpWallTimeMillis() -> UInt64
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
}

/// An opaque view an engine renders into (a `UIView`, an `NSView`, a window handle...).
/// Apps conform their view type: `extension UIView: CallCanvas {}`.
public protocol CallCanvas: AnyObject, Sendable {}
