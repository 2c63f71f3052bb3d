/// What an RTC engine reports.
public enum RTCEngineEvent: Sendable, Equatable {
    /// This user is in `channel`.
    case localJoined(channel: String, uid: UInt)
    /// This user left `channel`.
    case localLeft(channel: String)
    /// Joining `channel` failed.
    case joinFailed(channel: String, code: Int, message: String)
    /// Another user is in the channel.
    case remoteJoined(channel: String, uid: UInt)
    /// Another user left the channel; `reason` is the engine's (for example 0 quit, 1 dropped).
    case remoteLeft(channel: String, uid: UInt, reason: Int)
    /// `uid`, in the channel, now publishes audio and video as `audio` and `video` say (it paused or
    /// resumed publishing while staying in the channel, as a showroom host does during a 1v1 call).
    case remotePublishingChanged(channel: String, uid: UInt, audio: Bool, video: Bool)
    /// The first video frame of `uid` was decoded.
    case remoteFirstVideoFrameDecoded(channel: String, uid: UInt)
    /// The first audio frame of `uid` was decoded.
    case remoteFirstAudioFrameDecoded(channel: String, uid: UInt)
    /// The camera delivered its first frame.
    case localFirstVideoFrameCaptured
    /// The first local video frame was sent into `channel`.
    case localFirstVideoFramePublished(channel: String)
    /// The first local audio frame was sent into `channel`.
    case localFirstAudioFramePublished(channel: String)
    /// Media from `uid` stopped arriving while it publishes (the network path broke): the engine is restarting
    /// ICE to find another path. Optional for engines: one that never reports it never shows the call reconnecting.
    case remoteMediaInterrupted(channel: String, uid: UInt)
    /// Media from `uid` arrives again after ``remoteMediaInterrupted(channel:uid:)``, `gapMillis` after the last
    /// media before the break.
    case remoteMediaResumed(channel: String, uid: UInt, gapMillis: Int)
    /// How media from `uid` arrived over the last period (loss, jitter, round trip, bitrate, freezes). Optional for
    /// engines: an engine that never reports it leaves a call's quality unmeasured (docs/timeline.md).
    case remoteQuality(channel: String, uid: UInt, RTCQuality)
    /// The channel token expires soon; call `renewToken`.
    case tokenWillExpire(channel: String)
    /// The engine failed; `code` is the engine's.
    case error(code: Int, message: String)

    /// The channel the event is about; `nil` for engine-wide events (camera capture, errors).
    public var channel: String? {
        switch self {
        case .localJoined(let channel, _), .localLeft(let channel), .joinFailed(let channel, _, _),
            .remoteJoined(let channel, _), .remoteLeft(let channel, _, _),
            .remotePublishingChanged(let channel, _, _, _), .remoteFirstVideoFrameDecoded(let channel, _),
            .remoteFirstAudioFrameDecoded(let channel, _), .localFirstVideoFramePublished(let channel),
            .localFirstAudioFramePublished(let channel), .tokenWillExpire(let channel),
            .remoteMediaInterrupted(let channel, _), .remoteMediaResumed(let channel, _, _),
            .remoteQuality(let channel, _, _):
            channel
        case .localFirstVideoFrameCaptured, .error:
            nil
        }
    }
}
