// The CallAPI 2.x iOS README's integration code ("快速集成"), moved over with exactly the changes that
// docs/migrating.md lists; each changed line says which row of the table it follows (`// migrating: …`).
// On iOS `CallCanvas` is your `UIView`; here the views are test canvases.
import CallAPI
import CallAPITesting

/// A call screen written the way the seeds' apps write it: a main-actor view controller that is the listener.
@MainActor
final class SeedCallViewController: CallApiMainActorListener {  // migrating: CallApiMainActorListener
    let api = CallApiImpl()
    let currentUid: UInt
    let rightView = TestCanvas("local")
    let leftView = TestCanvas("remote")
    private(set) var seen: [(CallStateType, CallStateReason)] = []
    private(set) var events: [CallEvent] = []

    init(currentUid: UInt, rtcEngine: any CallRTCEngine, signalClient: any ISignalClient, clock: any CallClock) {
        self.currentUid = currentUid
        // 初始化config
        // migrating: CallConfig()
        var config = CallConfig(userId: currentUid, rtcEngine: rtcEngine, signalClient: signalClient, clock: clock)
        config.appId = "KeyCenter.AppId"
        config.userId = currentUid
        api.initialize(config: config)
        api.addListener(listener: self)
    }

    func prepare(rtcToken: String) {
        var prepareConfig = PrepareConfig()  // migrating: PrepareConfig()
        prepareConfig.rtcToken = rtcToken  // 设置rtc token(万能token)
        // migrating: rtmToken (removed)
        prepareConfig.roomId = "\(currentUid)"
        prepareConfig.localView = rightView
        prepareConfig.remoteView = leftView
        api.prepareForCall(prepareConfig: prepareConfig) { err in
            // 成功即可以开始进行呼叫
        }
    }

    func call(remoteUserId: UInt) {
        api.call(remoteUserId: remoteUserId) { err in
        }
    }

    func onCallStateChanged(  // migrating: stateReason: CallReason
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        seen.append((state, stateReason))
        if state == .calling {
            // 主叫用户的uid
            let fromUserId = eventInfo[kFromUserId] as? UInt ?? 0
            // 目标用户的uid，为当前用户
            let toUserId = eventInfo[kRemoteUserId] as? UInt ?? 0
            if toUserId == currentUid {
                api.accept(remoteUserId: fromUserId) { err in
                }
            }
        }
    }

    func onCallEventChanged(with event: CallEvent, eventReason: String?) {  // migrating: @objc optional
        events.append(event)
    }

    func hangup(showUserId: UInt) {
        api.hangup(remoteUserId: showUserId, reason: "hangup by user") { error in
        }
    }

    func close() {
        api.deinitialize {}  // migrating: deinitialize()
    }
}
