import CallAPISignalProtocol
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// A user online on one device while another sleeps (docs/push.md, "A user online on another device"): the call
/// rings the session and is pushed to the device no session names; the pushed device that logs in gets the call;
/// an answer, a decline, a cancel or the ring time withdraws the pushes with a tombstone saying why.
@Suite struct RingingPushesHubTests {
    var hub: HubState
    let caller = SessionID(1)
    let tablet = SessionID(2)
    let phone = SessionID(3)
    let iphone = PushTestKit.apnsDevice()
    let pixel = PushTestKit.fcmDevice()
    static let callMark = PushMark.call(callId: "call-1", callerName: "Ada", video: true)

    init() {
        var policy = PushPolicy()
        policy.ringSeconds = 30
        hub = HubState(limits: HubLimits(), pushPolicy: policy)
        login(caller, "1001")
        // 1002 registered two devices, and is online on the pixel.
        login(tablet, "1002", device: "pixel")
        _ = hub.handle(.frame(tablet, .registerDevice(.init(id: 2, device: iphone))), now: 0)
        _ = hub.handle(.frame(tablet, .registerDevice(.init(id: 3, device: pixel))), now: 0)
    }

    @discardableResult
    mutating func login(_ id: SessionID, _ user: String, device: String? = nil, now: Int64 = 0) -> [HubAction] {
        _ = hub.handle(.connected(id), now: now)
        _ = hub.handle(.frame(id, .login(.init(id: 1, token: "t", deviceId: device))), now: now)
        return hub.handle(
            .tokenChecked(
                id, requestId: 1, purpose: .login, result: .valid(userId: user, expiresAt: 9_999_999)), now: now)
    }

    mutating func send(
        from id: SessionID, to user: String, _ body: String, _ mark: PushMark?, requestId: Int = 9, now: Int64
    ) -> [HubAction] {
        hub.handle(.frame(id, .send(.init(id: requestId, to: user, body: body, push: mark))), now: now)
    }

    func frames(_ actions: [HubAction], to id: SessionID) -> [ServerFrame] {
        actions.compactMap { if case .send(id, let frame) = $0 { frame } else { nil } }
    }

    func pushes(_ actions: [HubAction]) -> [PushAction] {
        actions.compactMap { if case .push(let push) = $0 { push } else { nil } }
    }

    func messages(_ actions: [HubAction], to id: SessionID) -> [ServerFrame.Message] {
        frames(actions, to: id).compactMap { if case .message(let message) = $0 { message } else { nil } }
    }

    func withdrawals(_ actions: [HubAction], to id: SessionID) -> [ServerFrame.CallWithdrawn] {
        frames(actions, to: id).compactMap { if case .callWithdrawn(let withdrawn) = $0 { withdrawn } else { nil } }
    }

    @Test mutating func aCallRingsTheOnlineDeviceAndIsPushedOnceToTheSleepingOne() {
        let actions = send(from: caller, to: "1002", "call", Self.callMark, now: 1_000)
        #expect(messages(actions, to: tablet).map(\.body) == ["call"])
        let call = CallPush(callId: "call-1", callerId: 1001, callerName: "Ada", video: true, ringDeadline: 31_000)
        #expect(pushes(actions) == [.deliver(PushJob(userId: "1002", device: iphone, call: call))])
        // CallAPI repeats its call message until it hears back: no second push.
        #expect(pushes(send(from: caller, to: "1002", "call again", Self.callMark, requestId: 10, now: 3_000)).isEmpty)
    }

    @Test mutating func thePushedDeviceThatLogsInGetsTheCallWhileItRings() {
        let call = send(from: caller, to: "1002", "call", Self.callMark, now: 1_000)
        let relayed = messages(call, to: tablet).first
        let woken = login(phone, "1002", device: "iphone", now: 4_000)
        let delivered = messages(woken, to: phone)
        #expect(delivered.map(\.body) == ["call"])
        #expect(delivered.first?.messageId == relayed?.messageId)
        #expect(delivered.first?.held == true)
        // After the ring time, a login of that device gets nothing.
        _ = hub.handle(.disconnected(phone), now: 5_000)
        _ = hub.handle(.tick, now: 31_000)
        #expect(messages(login(phone, "1002", device: "iphone", now: 32_000), to: phone).isEmpty)
    }

    @Test mutating func anAnswerOnTheOnlineDeviceWithdrawsThePushWithATombstoneSayingSo() {
        _ = send(from: caller, to: "1002", "call", Self.callMark, now: 1_000)
        let accept = send(
            from: tablet, to: "1001", "accept", .answer(callId: "call-1", accepted: true), requestId: 4, now: 2_000)
        #expect(pushes(accept) == [.cancel(callId: "call-1", userId: "1002")])
        let woken = login(phone, "1002", device: "iphone", now: 3_000)
        #expect(withdrawals(woken, to: phone).map(\.reason) == [.answeredElsewhere])
        #expect(messages(woken, to: phone).isEmpty)
    }

    @Test mutating func aDeclineWithdrawsThePushAsDeclinedElsewhere() {
        _ = send(from: caller, to: "1002", "call", Self.callMark, now: 1_000)
        _ = send(
            from: tablet, to: "1001", "reject", .answer(callId: "call-1", accepted: false), requestId: 4, now: 2_000)
        #expect(
            withdrawals(login(phone, "1002", device: "iphone", now: 3_000), to: phone).map(\.reason) == [
                .declinedElsewhere
            ])
    }

    @Test mutating func theCallersCancelWithdrawsThePushAndNobodyElsesDoes() {
        _ = send(from: caller, to: "1002", "call", Self.callMark, now: 1_000)
        // A third user's withdraw of the call changes nothing.
        let stranger = SessionID(9)
        login(stranger, "1003")
        #expect(
            pushes(
                send(from: stranger, to: "1002", "cancel", .withdraw(callId: "call-1", reason: .cancelled), now: 1_500)
            )
            .isEmpty)
        let cancel = send(
            from: caller, to: "1002", "cancel", .withdraw(callId: "call-1", reason: .cancelled), requestId: 5,
            now: 2_000)
        #expect(pushes(cancel) == [.cancel(callId: "call-1", userId: "1002")])
        #expect(
            withdrawals(login(phone, "1002", device: "iphone", now: 3_000), to: phone).map(\.reason) == [.cancelled])
    }

    @Test mutating func aRingNobodySettlesLeavesAnExpiredTombstone() {
        _ = send(from: caller, to: "1002", "call", Self.callMark, now: 1_000)
        _ = hub.handle(.tick, now: 31_000)
        #expect(withdrawals(login(phone, "1002", device: "iphone", now: 32_000), to: phone).map(\.reason) == [.expired])
    }

    @Test mutating func aSessionThatNamesNoDeviceKeepsTheOldRuleOfNoPushWhileOnline() {
        login(SessionID(7), "1002")
        #expect(pushes(send(from: caller, to: "1002", "call", Self.callMark, now: 1_000)).isEmpty)
    }

    @Test mutating func aLoginNamingAnUnusableDeviceIsRefusedWithTheReason() {
        _ = hub.handle(.connected(phone), now: 0)
        let actions = hub.handle(.frame(phone, .login(.init(id: 1, token: "t", deviceId: "no spaces"))), now: 0)
        guard case .error(let error) = frames(actions, to: phone).first else {
            Issue.record("expected an error, got \(actions)")
            return
        }
        #expect(error.code == .invalidFrame)
        #expect(error.message.contains("deviceId"))
    }

    @Test mutating func aHeldCallTakenOnOneDeviceIsWithdrawnFromTheOthersByItsAnswer() {
        // 1002 goes offline; the call is held and pushed to both devices; the iPhone wakes and takes it.
        _ = hub.handle(.disconnected(tablet), now: 0)
        #expect(pushes(send(from: caller, to: "1002", "call", Self.callMark, now: 1_000)).count == 2)
        let woken = login(phone, "1002", device: "iphone", now: 3_000)
        #expect(messages(woken, to: phone).map(\.body) == ["call"])
        _ = send(from: phone, to: "1001", "accept", .answer(callId: "call-1", accepted: true), requestId: 4, now: 4_000)
        #expect(
            withdrawals(login(tablet, "1002", device: "pixel", now: 5_000), to: tablet).map(\.reason) == [
                .answeredElsewhere
            ])
    }

    @Test mutating func pastTheHeldBytesBudgetTheSleepingDeviceIsNotPushedButTheCallStillRings() {
        var limits = HubLimits()
        limits.maxHeldBytes = 3
        var policy = PushPolicy()
        policy.ringSeconds = 30
        hub = HubState(limits: limits, pushPolicy: policy)
        login(caller, "1001")
        login(tablet, "1002", device: "pixel")
        _ = hub.handle(.frame(tablet, .registerDevice(.init(id: 2, device: iphone))), now: 0)
        let actions = send(from: caller, to: "1002", "call", Self.callMark, now: 1_000)
        #expect(messages(actions, to: tablet).map(\.body) == ["call"])
        #expect(pushes(actions).isEmpty)
    }
}
