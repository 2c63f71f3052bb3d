// The README's integration guide, compiled here. ReadmeGuideTests checks that README.md shows exactly
// the code between the markers, and runs it.
import CallAPI
import Foundation

// README-GUIDE-BEGIN
/// One user's call screen. On iOS, `CallCanvas` is your `UIView` (`extension UIView: CallCanvas {}`).
final class CallScreen: CallApiListenerProtocol {
    let api = CallApiImpl()
    let userId: UInt

    // 1. Initialize with this user's id, an RTC engine and a signaling client (and, in tests, a manual clock).
    init(
        userId: UInt, rtcEngine: any CallRTCEngine, signalClient: any ISignalClient,
        clock: any CallClock = SystemCallClock()
    ) {
        self.userId = userId
        api.initialize(
            config: CallConfig(
                appId: "my-app", userId: userId, rtcEngine: rtcEngine, signalClient: signalClient, clock: clock))
        // 3. Listen (the API holds listeners weakly).
        api.addListener(listener: self)
    }

    // 2. Prepare: RTC token and views; every call gets a fresh room. Set `rtcTokenProvider` to fetch a token
    //    for each call's room from your server instead of using one token for any room.
    func prepare(localView: any CallCanvas, remoteView: any CallCanvas) async throws {
        var config = PrepareConfig(
            rtcToken: "<rtc token>", localView: localView, remoteView: remoteView, callTimeoutMillisecond: 15_000)
        config.userExtension = ["nickname": "user \(userId)"]
        try await api.prepareForCall(prepareConfig: config)
    }

    // 3. Call a user.
    func call(_ peer: UInt) {
        api.call(remoteUserId: peer, callType: .video, callExtension: ["topic": "hello"]) { error in
            if let error { print("call failed: \(error)") }
        }
    }

    // 4. Listen for state changes: ring, accept, connected, ended.
    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        switch (state, stateReason) {
        case (.calling, .remoteVideoCall), (.calling, .remoteAudioCall):
            // 5. Incoming call: show it; here we accept at once.
            guard let caller = eventInfo[kFromUserId] as? UInt else { return }
            api.accept(remoteUserId: caller) { error in
                if let error { print("accept failed: \(error)") }
            }
        case (.connected, _):
            // 6. Connected: the peer's first frame is on screen.
            let costs = eventInfo[kCostTimeMap] as? [String: Any] ?? [:]
            print("connected after \(costs["recvFirstFrame"] ?? "?") ms")
        case (.prepared, .remoteHangup), (.prepared, .remoteRejected), (.prepared, .remoteCallBusy):
            print("call ended: \(stateReason)")
        default:
            break
        }
    }

    // 7. Hang up.
    func hangup(_ peer: UInt) {
        api.hangup(remoteUserId: peer, reason: "bye") { _ in }
    }

    // 8. Deinitialize when the user logs out.
    func close() async {
        await api.deinitialize()
    }
}
// README-GUIDE-END
