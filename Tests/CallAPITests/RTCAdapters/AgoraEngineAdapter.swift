import CallAPI
import Foundation

/// A ``CallRTCEngine`` over the Agora RTC SDK (any ``AgoraShapedRtcEngine``): each seam method is one or
/// two SDK calls on `queue`, and each connection's delegate callbacks become ``RTCEngineEvent``s, reported
/// to the listeners on the SDK's delegate thread (the main thread with the real SDK).
///
/// The call channel and each secondary channel are connections of their own (`joinChannelEx`), each with
/// its own delegate, so every event knows its channel.
final class AgoraEngineAdapter: CallRTCEngine {
    private let sdk: SDKConfined
    private let listeners = RTCEventListeners()

    /// An adapter calling `sdk` on `queue` only (`.main` with the real SDK, which expects one thread).
    init(sdk: any AgoraShapedRtcEngine, queue: DispatchQueue = .main) {
        self.sdk = SDKConfined(sdk: sdk, queue: queue)
    }

    @discardableResult
    func addEventListener(_ listener: @escaping @Sendable (RTCEngineEvent) -> Void) -> RTCEventListenerToken {
        listeners.add(listener)
    }

    func removeEventListener(_ token: RTCEventListenerToken) { listeners.remove(token) }

    func joinChannel(_ channel: String, token: String, uid: UInt, media: RTCMediaOptions) {
        sdk.run { [listeners] sdk in
            if let current = sdk.call { sdk.leave(current) }
            sdk.call = sdk.join(channel, token: token, uid: uid, media: media, listeners: listeners)
        }
    }

    func updateMedia(_ media: RTCMediaOptions) {
        sdk.run { sdk in
            guard let call = sdk.call else { return }
            _ = sdk.engine.updateChannelEx(with: media.agoraOptions(token: nil), connection: call.connection)
        }
    }

    func leaveChannel() {
        sdk.run { sdk in
            guard let call = sdk.call else { return }
            sdk.call = nil
            sdk.leave(call)
        }
    }

    func joinSecondaryChannel(_ channel: String, token: String, uid: UInt, media: RTCMediaOptions) {
        sdk.run { [listeners] sdk in
            guard sdk.call?.connection.channelId != channel, sdk.secondaries[channel] == nil else {
                // The SDK refuses a second join of a channel with ERR_JOIN_CHANNEL_REJECTED (17).
                listeners.emit(.joinFailed(channel: channel, code: 17, message: "already in channel \(channel)"))
                return
            }
            sdk.secondaries[channel] = sdk.join(channel, token: token, uid: uid, media: media, listeners: listeners)
        }
    }

    func updateSecondaryChannelMedia(_ channel: String, media: RTCMediaOptions) {
        sdk.run { sdk in
            guard let membership = sdk.secondaries[channel] else { return }
            _ = sdk.engine.updateChannelEx(with: media.agoraOptions(token: nil), connection: membership.connection)
        }
    }

    func leaveSecondaryChannel(_ channel: String) {
        sdk.run { sdk in
            guard let membership = sdk.secondaries.removeValue(forKey: channel) else { return }
            sdk.leave(membership)
        }
    }

    func setRemotePlaybackVolume(_ volume: Int, uid: UInt) {
        sdk.run { sdk in
            _ = sdk.engine.muteRemoteAudioStream(uid, mute: volume <= 0)
            if volume > 0 { _ = sdk.engine.adjustUserPlaybackSignalVolume(uid, volume: Int32(min(volume, 100))) }
        }
    }

    func setLocalCanvas(_ view: (any CallCanvas)?) {
        sdk.run { sdk in
            let canvas = RtcVideoCanvas()
            canvas.view = view
            _ = sdk.engine.setupLocalVideo(view == nil ? nil : canvas)
        }
    }

    func setRemoteCanvas(_ view: (any CallCanvas)?, uid: UInt) {
        sdk.run { sdk in
            guard let call = sdk.call else { return }
            let canvas = RtcVideoCanvas()
            canvas.uid = uid
            canvas.view = view
            _ = sdk.engine.setupRemoteVideoEx(canvas, connection: call.connection)
        }
    }

    func startPreview() { sdk.run { _ = $0.engine.startPreview() } }

    func stopPreview() { sdk.run { _ = $0.engine.stopPreview() } }

    func renewToken(_ token: String) {
        sdk.run { sdk in
            guard let call = sdk.call else { return }
            var options = RtcChannelMediaOptions()
            options.token = token
            _ = sdk.engine.updateChannelEx(with: options, connection: call.connection)
        }
    }

    func ntpWallTimeMillis() -> UInt64 { sdk.runAndWait { $0.engine.getNtpWallTimeInMs() } }
}

/// The SDK object and its connections, used on one serial queue only.
private final class SDKConfined: @unchecked Sendable {
    // @unchecked: every field is touched only inside `run`/`runAndWait`, on `queue`, one block at a time.
    struct Membership {
        let connection: RtcConnection
        /// The SDK holds delegates weakly: the membership keeps its own.
        let delegate: ConnectionDelegate
    }

    let engine: any AgoraShapedRtcEngine
    let queue: DispatchQueue
    var call: Membership?
    var secondaries: [String: Membership] = [:]

    init(sdk: any AgoraShapedRtcEngine, queue: DispatchQueue) {
        engine = sdk
        self.queue = queue
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    func run(_ body: @escaping @Sendable (SDKConfined) -> Void) {
        queue.async { body(self) }
    }

    /// Runs `body` on the queue and waits; at once when already on it (the main queue calling in).
    func runAndWait<T>(_ body: (SDKConfined) -> T) -> T {
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) { return body(self) }
        return queue.sync { body(self) }
    }

    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    func join(
        _ channel: String, token: String, uid: UInt, media: RTCMediaOptions, listeners: RTCEventListeners
    ) -> Membership {
        let connection = RtcConnection(channelId: channel, localUid: uid)
        let delegate = ConnectionDelegate(channel: channel, listeners: listeners)
        let result = engine.joinChannelEx(
            byToken: token, connection: connection, delegate: delegate, mediaOptions: media.agoraOptions(token: nil),
            joinSuccess: nil)
        if result < 0 {
            listeners.emit(
                .joinFailed(channel: channel, code: Int(-result), message: "joinChannelEx returned \(result)"))
        }
        return Membership(connection: connection, delegate: delegate)
    }

    func leave(_ membership: Membership) {
        _ = engine.leaveChannelEx(membership.connection, leaveChannelBlock: nil)
    }
}

/// One connection's delegate: the SDK's callbacks as this channel's events.
private final class ConnectionDelegate: RtcEngineDelegateShape {
    let channel: String
    let listeners: RTCEventListeners
    /// What each remote user publishes, from the muted callbacks, to report both kinds at once.
    private var publishing: [UInt: (audio: Bool, video: Bool)] = [:]

    init(channel: String, listeners: RTCEventListeners) {
        self.channel = channel
        self.listeners = listeners
    }

    private func emit(_ event: RTCEngineEvent) { listeners.emit(event) }

    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didJoinChannel channel: String, withUid uid: UInt, elapsed: Int)
    {
        emit(.localJoined(channel: self.channel, uid: uid))
    }

    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didLeaveChannelWith stats: Any) {
        emit(.localLeft(channel: channel))
    }

    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didJoinedOfUid uid: UInt, elapsed: Int) {
        emit(.remoteJoined(channel: channel, uid: uid))
    }

    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didOfflineOfUid uid: UInt, reason: UserOfflineReason) {
        publishing[uid] = nil
        emit(.remoteLeft(channel: channel, uid: uid, reason: Int(reason.rawValue)))
    }

    func rtcEngine(
        _ engine: any AgoraShapedRtcEngine, firstRemoteVideoFrameOfUid uid: UInt, size: CGSize, elapsed: Int
    ) {
        emit(.remoteFirstVideoFrameDecoded(channel: channel, uid: uid))
    }

    func rtcEngine(_ engine: any AgoraShapedRtcEngine, firstRemoteAudioFrameOfUid uid: UInt, elapsed: Int) {
        emit(.remoteFirstAudioFrameDecoded(channel: channel, uid: uid))
    }

    func rtcEngine(_ engine: any AgoraShapedRtcEngine, firstLocalVideoFrameWith size: CGSize, elapsed: Int) {
        emit(.localFirstVideoFrameCaptured)
    }

    func rtcEngine(_ engine: any AgoraShapedRtcEngine, firstLocalVideoFramePublishedWithElapsed elapsed: Int) {
        emit(.localFirstVideoFramePublished(channel: channel))
    }

    func rtcEngine(_ engine: any AgoraShapedRtcEngine, firstLocalAudioFramePublished elapsed: Int) {
        emit(.localFirstAudioFramePublished(channel: channel))
    }

    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didVideoMuted muted: Bool, byUid uid: UInt) {
        var now = publishing[uid] ?? (true, true)
        now.video = !muted
        publishing[uid] = now
        emit(.remotePublishingChanged(channel: channel, uid: uid, audio: now.audio, video: now.video))
    }

    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didAudioMuted muted: Bool, byUid uid: UInt) {
        var now = publishing[uid] ?? (true, true)
        now.audio = !muted
        publishing[uid] = now
        emit(.remotePublishingChanged(channel: channel, uid: uid, audio: now.audio, video: now.video))
    }

    func rtcEngine(_ engine: any AgoraShapedRtcEngine, tokenPrivilegeWillExpire token: String) {
        emit(.tokenWillExpire(channel: channel))
    }

    func rtcEngine(_ engine: any AgoraShapedRtcEngine, didOccurError errorCode: Int) {
        emit(.error(code: errorCode, message: "Agora error \(errorCode)"))
    }
}

extension RTCMediaOptions {
    /// The SDK's channel media options for these.
    func agoraOptions(token: String?) -> RtcChannelMediaOptions {
        RtcChannelMediaOptions(
            publishCameraTrack: publishCamera, publishMicrophoneTrack: publishMicrophone,
            autoSubscribeAudio: subscribeAudio, autoSubscribeVideo: subscribeVideo, token: token)
    }
}
