import Foundation

// The subset of the Agora RTC SDK (4.x, iOS/macOS) that the 2.x CallAPI seeds use, with the SDK's Swift
// names and argument labels, declared here so the adapter compiles and runs without the SDK. With the real
// SDK, delete this file and conform the SDK's class:
//
//     extension AgoraRtcEngineKit: AgoraShapedRtcEngine {}
//
// and use `AgoraRtcConnection`, `AgoraRtcChannelMediaOptions`, `AgoraRtcVideoCanvas` and
// `AgoraRtcEngineDelegate` where these stand-ins are.

/// A channel membership of the engine: channel name and local uid (`AgoraRtcConnection`).
final class RtcConnection {
    let channelId: String
    let localUid: UInt

    init(channelId: String, localUid: UInt) {
        self.channelId = channelId
        self.localUid = localUid
    }
}

/// What a connection publishes and subscribes (`AgoraRtcChannelMediaOptions`; the SDK wraps each field
/// in an optional object, plain `Bool`s are enough here).
struct RtcChannelMediaOptions: Equatable {
    var publishCameraTrack = false
    var publishMicrophoneTrack = false
    var autoSubscribeAudio = false
    var autoSubscribeVideo = false
    var token: String?
}

/// Where a user's video is drawn (`AgoraRtcVideoCanvas`); `view == nil` releases it.
final class RtcVideoCanvas {
    var uid: UInt = 0
    var view: AnyObject?
}

/// Why a remote user went offline (`AgoraUserOfflineReason`).
enum UserOfflineReason: UInt {
    case quit = 0
    case dropped = 1
    case becomeAudience = 2
}

/// The SDK calls (`AgoraRtcEngineKit`).
protocol AgoraShapedRtcEngine: AnyObject {
    func joinChannelEx(
        byToken token: String?, connection: RtcConnection, delegate: (any RtcEngineDelegateShape)?,
        mediaOptions: RtcChannelMediaOptions, joinSuccess: ((String, UInt, Int) -> Void)?
    ) -> Int32
    func updateChannelEx(with mediaOptions: RtcChannelMediaOptions, connection: RtcConnection) -> Int32
    func leaveChannelEx(_ connection: RtcConnection, leaveChannelBlock: ((Any) -> Void)?) -> Int32
    func setupLocalVideo(_ local: RtcVideoCanvas?) -> Int32
    func setupRemoteVideoEx(_ remote: RtcVideoCanvas, connection: RtcConnection) -> Int32
    func muteRemoteAudioStream(_ uid: UInt, mute: Bool) -> Int32
    func adjustUserPlaybackSignalVolume(_ uid: UInt, volume: Int32) -> Int32
    func startPreview() -> Int32
    func stopPreview() -> Int32
    func getNtpWallTimeInMs() -> UInt64
}

/// The SDK's callbacks for one connection (`AgoraRtcEngineDelegate`, the methods the seeds implement).
protocol RtcEngineDelegateShape: AnyObject {
    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didJoinChannel channel: String, withUid uid: UInt, elapsed: Int)
    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didLeaveChannelWith stats: Any)
    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didJoinedOfUid uid: UInt, elapsed: Int)
    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didOfflineOfUid uid: UInt, reason: UserOfflineReason)
    func rtcEngine(_ engine: any AgoraShapedRtcEngine, firstRemoteVideoFrameOfUid uid: UInt, size: CGSize, elapsed: Int)
    func rtcEngine(_ engine: any AgoraShapedRtcEngine, firstRemoteAudioFrameOfUid uid: UInt, elapsed: Int)
    func rtcEngine(_ engine: any AgoraShapedRtcEngine, firstLocalVideoFrameWith size: CGSize, elapsed: Int)
    func rtcEngine(_ engine: any AgoraShapedRtcEngine, firstLocalVideoFramePublishedWithElapsed elapsed: Int)
    func rtcEngine(_ engine: any AgoraShapedRtcEngine, firstLocalAudioFramePublished elapsed: Int)
    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didVideoMuted muted: Bool, byUid uid: UInt)
    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didAudioMuted muted: Bool, byUid uid: UInt)
    func rtcEngine(_ engine: any AgoraShapedRtcEngine, tokenPrivilegeWillExpire token: String)
    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didOccurError errorCode: Int)
}
