import CallAPI
import Foundation

/// Stands in for the Agora SDK in tests: records each call as the line a reader would write, holds the
/// connections' delegates weakly (as the SDK does), and lets the test play the SDK's callbacks.
final class FakeAgoraEngine: AgoraShapedRtcEngine {
    private struct State {
        var calls: [String] = []
        var delegates: [String: WeakDelegate] = [:]
    }

    private struct WeakDelegate {
        weak var delegate: (any RtcEngineDelegateShape)?
    }

    private let state = Locked(State())
    /// What `joinChannelEx` returns (negative: the SDK refused).
    let joinResult = Locked<Int32>(0)

    var calls: [String] { state.withLock { $0.calls } }

    /// Plays a callback of `channel`'s connection delegate; false when the delegate is gone.
    @discardableResult
    func callback(
        _ channel: String, _ body: (any RtcEngineDelegateShape, any AgoraShapedRtcEngine) -> Void
    ) -> Bool {
        guard let delegate = state.withLock({ $0.delegates[channel]?.delegate }) else { return false }
        body(delegate, self)
        return true
    }

    private func record(_ call: String) { state.withLock { $0.calls.append(call) } }

    func joinChannelEx(
        byToken token: String?, connection: RtcConnection, delegate: (any RtcEngineDelegateShape)?,
        mediaOptions: RtcChannelMediaOptions, joinSuccess: ((String, UInt, Int) -> Void)?
    ) -> Int32 {
        let options = mediaOptions
        record(
            "joinChannelEx \(connection.channelId) uid=\(connection.localUid) token=\(token ?? "-") "
                + "camera=\(options.publishCameraTrack) mic=\(options.publishMicrophoneTrack) "
                + "subAudio=\(options.autoSubscribeAudio) subVideo=\(options.autoSubscribeVideo)")
        state.withLock { $0.delegates[connection.channelId] = WeakDelegate(delegate: delegate) }
        return joinResult.withLock { $0 }
    }

    func updateChannelEx(with mediaOptions: RtcChannelMediaOptions, connection: RtcConnection) -> Int32 {
        let options = mediaOptions
        if let token = options.token {
            record("updateChannelEx \(connection.channelId) token=\(token)")
        } else {
            record(
                "updateChannelEx \(connection.channelId) camera=\(options.publishCameraTrack) "
                    + "mic=\(options.publishMicrophoneTrack)")
        }
        return 0
    }

    func leaveChannelEx(_ connection: RtcConnection, leaveChannelBlock: ((Any) -> Void)?) -> Int32 {
        record("leaveChannelEx \(connection.channelId)")
        return 0
    }

    func setupLocalVideo(_ local: RtcVideoCanvas?) -> Int32 {
        record("setupLocalVideo \(local == nil ? "nil" : "view")")
        return 0
    }

    func setupRemoteVideoEx(_ remote: RtcVideoCanvas, connection: RtcConnection) -> Int32 {
        record("setupRemoteVideoEx \(connection.channelId) uid=\(remote.uid) \(remote.view == nil ? "nil" : "view")")
        return 0
    }

    func muteRemoteAudioStream(_ uid: UInt, mute: Bool) -> Int32 {
        record("muteRemoteAudioStream \(uid) mute=\(mute)")
        return 0
    }

    func adjustUserPlaybackSignalVolume(_ uid: UInt, volume: Int32) -> Int32 {
        record("adjustUserPlaybackSignalVolume \(uid) \(volume)")
        return 0
    }

    func startPreview() -> Int32 {
        record("startPreview")
        return 0
    }

    func stopPreview() -> Int32 {
        record("stopPreview")
        return 0
    }

    func getNtpWallTimeInMs() -> UInt64 { 1_700_000_000_000 }
}
