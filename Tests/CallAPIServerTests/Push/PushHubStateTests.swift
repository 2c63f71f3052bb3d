import CallAPISignalProtocol
import Foundation
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The hub's push rules, driven directly with explicit times: registration, calls held and pushed, withdrawals,
/// tombstones, rejected devices.
@Suite struct PushHubStateTests {
    var hub: HubState
    let caller = SessionID(1)
    let callee = SessionID(2)
    let iphone = PushTestKit.apnsDevice()
    let pixel = PushTestKit.fcmDevice()

    init() {
        var policy = PushPolicy()
        policy.ringSeconds = 30
        policy.tombstoneSeconds = 120
        hub = HubState(limits: HubLimits(), pushPolicy: policy)
    }

    @discardableResult
    mutating func login(_ id: SessionID, _ user: String, now: Int64 = 0) -> [HubAction] {
        _ = hub.handle(.connected(id), now: now)
        _ = hub.handle(.frame(id, .login(.init(id: 1, token: "t"))), now: now)
        return hub.handle(
            .tokenChecked(
                id, requestId: 1, purpose: .login, result: .valid(userId: user, expiresAt: 9_999_999)), now: now)
    }

    /// Logs the callee in, registers both its devices, logs it out.
    mutating func calleeWithDevices() {
        login(callee, "1002")
        _ = hub.handle(.frame(callee, .registerDevice(.init(id: 2, device: iphone))), now: 0)
        _ = hub.handle(.frame(callee, .registerDevice(.init(id: 3, device: pixel))), now: 0)
        _ = hub.handle(.disconnected(callee), now: 0)
    }

    func frames(_ actions: [HubAction], to id: SessionID) -> [ServerFrame] {
        actions.compactMap { if case .send(id, let frame) = $0 { frame } else { nil } }
    }

    func pushes(_ actions: [HubAction]) -> [PushAction] {
        actions.compactMap { if case .push(let push) = $0 { push } else { nil } }
    }

    static let callMark = PushMark.call(callId: "call-1", callerName: "Ada", video: true)

    @Test mutating func registeringAnswersTheDeviceListWithoutTokensAndAsksToSave() {
        login(callee, "1002")
        let actions = hub.handle(.frame(callee, .registerDevice(.init(id: 2, device: iphone))), now: 5)
        guard case .devices(let list) = frames(actions, to: callee).first else {
            Issue.record("expected devices, got \(actions)")
            return
        }
        #expect(list.id == 2)
        #expect(list.devices.map(\.deviceId) == ["iphone"])
        #expect(FrameCoding.encode(ServerFrame.devices(list)).contains(iphone.token) == false)
        #expect(pushes(actions) == [.saveDevices(hub.devices)])
    }

    @Test mutating func unusableCredentialsAreRefusedWithTheReason() {
        login(callee, "1002")
        var bad = iphone
        bad.token = "not hex!"
        let actions = hub.handle(.frame(callee, .registerDevice(.init(id: 4, device: bad))), now: 0)
        guard case .error(let error) = frames(actions, to: callee).first else {
            Issue.record("expected an error, got \(actions)")
            return
        }
        #expect(error.code == .invalidFrame)
        #expect(error.message.contains("token"))
        #expect(hub.devices.deviceCount == 0)
    }

    @Test mutating func aCallToAnOfflineUserWithDevicesIsHeldForTheRingTimeAndPushedOncePerDevice() {
        calleeWithDevices()
        login(caller, "1001")
        let actions = hub.handle(
            .frame(caller, .send(.init(id: 9, to: "1002", body: "call", push: Self.callMark))), now: 1_000)
        guard case .answer(let answer) = frames(actions, to: caller).first else {
            Issue.record("expected an answer, got \(actions)")
            return
        }
        #expect(answer.result == .queued)
        #expect(answer.ttl == 30)
        let call = CallPush(callId: "call-1", callerId: 1001, callerName: "Ada", video: true, ringDeadline: 31_000)
        #expect(
            pushes(actions) == [
                .deliver(PushJob(userId: "1002", device: iphone, call: call)),
                .deliver(PushJob(userId: "1002", device: pixel, call: call)),
            ])

        // Logging in within the ring time rings with the same call; its unsent pushes are cancelled.
        let login = login(callee, "1002", now: 5_000)
        #expect(frames(login, to: callee).contains { if case .message(let m) = $0 { m.body == "call" } else { false } })
        #expect(pushes(login) == [.cancel(callId: "call-1", userId: "1002")])
    }

    @Test mutating func aRepeatedCallMessageReplacesTheHeldCallAndIsNotPushedAgain() {
        calleeWithDevices()
        login(caller, "1001")
        let first = hub.handle(
            .frame(caller, .send(.init(id: 9, to: "1002", body: "call", push: Self.callMark))), now: 1_000)
        #expect(pushes(first).count == 2)
        guard case .answer(let firstAnswer) = frames(first, to: caller).first else {
            Issue.record("expected an answer, got \(first)")
            return
        }
        // CallAPI repeats its call message every couple of seconds until it hears back.
        for (index, at) in [3_000, 5_000, 7_000, 9_000, 11_000].enumerated() {
            let repeated = hub.handle(
                .frame(caller, .send(.init(id: 10 + index, to: "1002", body: "call again", push: Self.callMark))),
                now: Int64(at))
            #expect(pushes(repeated).isEmpty)
            guard case .answer(let answer) = frames(repeated, to: caller).first else {
                Issue.record("expected an answer, got \(repeated)")
                return
            }
            #expect(answer.result == .queued)
            #expect(answer.messageId == firstAnswer.messageId)
        }
        #expect(hub.heldCount == 1)
        // The held call is the latest one, with the latest deadline: still held at the first one's expiry.
        #expect(pushes(hub.handle(.tick, now: 31_000)).isEmpty)
        let login = login(callee, "1002", now: 35_000)
        let messages = frames(login, to: callee).compactMap { if case .message(let m) = $0 { m.body } else { nil } }
        #expect(messages == ["call again"])
    }

    @Test mutating func aCallToAUserWithoutDevicesFailsAtOnceAsBefore() {
        login(caller, "1001")
        let actions = hub.handle(
            .frame(caller, .send(.init(id: 9, to: "1002", body: "call", push: Self.callMark))), now: 0)
        guard case .answer(let answer) = frames(actions, to: caller).first else { return }
        #expect(answer.reason == .peerOffline)
        #expect(pushes(actions).isEmpty)
    }

    @Test mutating func aCancelBeforeLoginWithdrawsTheHeldCallAndTheLoginGetsTheTombstone() {
        calleeWithDevices()
        login(caller, "1001")
        _ = hub.handle(.frame(caller, .send(.init(id: 9, to: "1002", body: "call", push: Self.callMark))), now: 1_000)
        let cancel = hub.handle(
            .frame(
                caller,
                .send(.init(id: 10, to: "1002", body: "cancel", push: .withdraw(callId: "call-1", reason: .cancelled)))),
            now: 2_000)
        #expect(pushes(cancel) == [.cancel(callId: "call-1", userId: "1002")])
        guard case .answer(let answer) = frames(cancel, to: caller).first else { return }
        #expect(answer.result == .queued)
        #expect(hub.heldCount == 0)

        let login = login(callee, "1002", now: 3_000)
        let received = frames(login, to: callee)
        #expect(received.contains(.callWithdrawn(.init(callId: "call-1", reason: .cancelled, at: 2_000))))
        #expect(!received.contains { if case .message = $0 { true } else { false } })
    }

    @Test mutating func aRingTimeoutExpiresThePushedCallIntoAnExpiredTombstone() {
        calleeWithDevices()
        login(caller, "1001")
        _ = hub.handle(.frame(caller, .send(.init(id: 9, to: "1002", body: "call", push: Self.callMark))), now: 0)
        let tick = hub.handle(.tick, now: 30_000)
        #expect(pushes(tick) == [.cancel(callId: "call-1", userId: "1002")])
        let login = login(callee, "1002", now: 40_000)
        #expect(
            frames(login, to: callee).contains(.callWithdrawn(.init(callId: "call-1", reason: .expired, at: 30_000))))
        // Tombstones are kept for their lifetime only.
        _ = hub.handle(.tick, now: 151_000)
        #expect(hub.liveTombstones(of: "1002", now: 151_000).isEmpty)
    }

    @Test mutating func aRejectedTokenRemovesTheDeviceOnlyIfItIsStillTheRegisteredOne() {
        calleeWithDevices()
        #expect(hub.handle(.pushRejected(userId: "1002", deviceId: "iphone", token: "other"), now: 0).isEmpty)
        let actions = hub.handle(.pushRejected(userId: "1002", deviceId: "iphone", token: iphone.token), now: 0)
        #expect(hub.devices.devices(of: "1002").map(\.device.deviceId) == ["pixel"])
        #expect(actions == [.push(.saveDevices(hub.devices))])
    }

    @Test mutating func aMarkWithAnOverlongCallIdIsRefused() {
        login(caller, "1001")
        let mark = PushMark.call(callId: String(repeating: "x", count: 200), callerName: nil, video: false)
        let actions = hub.handle(.frame(caller, .send(.init(id: 1, to: "1002", body: "b", push: mark))), now: 0)
        guard case .answer(let answer) = frames(actions, to: caller).first else { return }
        #expect(answer.reason == .invalidFrame)
    }
}

/// The push queue: slots, withdrawal before sending, retries with backoff, rejected tokens.
@Suite struct PushDispatchTests {
    static func job(_ callId: String, deadline: Int64 = 30_000) -> PushJob {
        PushJob(
            userId: "1002", device: PushTestKit.apnsDevice(),
            call: CallPush(callId: callId, callerId: 1001, callerName: nil, video: false, ringDeadline: deadline))
    }

    @Test func aWithdrawalBeforeThePushIsSentMeansItIsNeverSent() {
        var settings = PushDispatch.Settings()
        settings.maxInFlight = 1
        var dispatch = PushDispatch(settings: settings)
        #expect(dispatch.handle(.deliver(Self.job("a"), now: 0)) == [.send(1, Self.job("a"), attempt: 1)])
        #expect(dispatch.handle(.deliver(Self.job("b"), now: 0)).isEmpty)  // waits for the slot
        #expect(dispatch.handle(.cancel(callId: "b", userId: "1002", now: 1)) == [.count(.apns, .withdrawn)])
        #expect(dispatch.handle(.finished(1, .delivered, now: 2)) == [.count(.apns, .delivered)])
        #expect(dispatch.inFlight == 0 && dispatch.waiting == 0)
    }

    @Test func passingFailuresAreRetriedWithBackoffAndABoundedNumberOfAttempts() {
        var settings = PushDispatch.Settings()
        settings.maxAttempts = 3
        settings.backoffBaseMillis = 100
        var dispatch = PushDispatch(settings: settings)
        let job = Self.job("a")
        _ = dispatch.handle(.deliver(job, now: 0))
        #expect(dispatch.handle(.finished(1, .retry("503", afterMillis: nil), now: 10)) == [.count(.apns, .retried)])
        #expect(dispatch.nextWake == 110)
        #expect(dispatch.handle(.tick(now: 109)).isEmpty)
        #expect(dispatch.handle(.tick(now: 110)) == [.send(1, job, attempt: 2)])
        #expect(dispatch.handle(.finished(1, .retry("429", afterMillis: 1_000), now: 120)) == [.count(.apns, .retried)])
        #expect(dispatch.nextWake == 1_120)  // the provider's Retry-After wins over the shorter backoff
        #expect(dispatch.handle(.tick(now: 1_120)) == [.send(1, job, attempt: 3)])
        #expect(dispatch.handle(.finished(1, .retry("503", afterMillis: nil), now: 1_200)) == [.count(.apns, .failed)])
        #expect(dispatch.waiting == 0)
    }

    @Test func noRetryPastTheRingDeadlineOrAfterAWithdrawal() {
        var dispatch = PushDispatch()
        let job = Self.job("a", deadline: 200)
        _ = dispatch.handle(.deliver(job, now: 0))
        #expect(dispatch.handle(.finished(1, .retry("503", afterMillis: nil), now: 100)) == [.count(.apns, .failed)])

        _ = dispatch.handle(.deliver(Self.job("b"), now: 0))
        _ = dispatch.handle(.cancel(callId: "b", userId: "1002", now: 1))  // while sending
        #expect(dispatch.handle(.finished(2, .retry("503", afterMillis: nil), now: 2)) == [.count(.apns, .withdrawn)])
    }

    @Test func anUnregisteredTokenAsksToRemoveTheDevice() {
        var dispatch = PushDispatch()
        let job = Self.job("a")
        _ = dispatch.handle(.deliver(job, now: 0))
        #expect(
            dispatch.handle(.finished(1, .unregistered("410"), now: 1)) == [
                .count(.apns, .unregistered),
                .removeDevice(userId: "1002", deviceId: job.device.deviceId, token: job.device.token),
            ])
    }

    @Test func aFullQueueDropsWithAnOverflowCount() {
        var settings = PushDispatch.Settings()
        settings.maxInFlight = 1
        settings.maxWaiting = 1
        var dispatch = PushDispatch(settings: settings)
        _ = dispatch.handle(.deliver(Self.job("a"), now: 0))
        _ = dispatch.handle(.deliver(Self.job("b"), now: 0))
        #expect(dispatch.handle(.deliver(Self.job("c"), now: 0)) == [.count(.apns, .overflow)])
    }
}

/// The device store file.
@Suite struct DeviceStoreTests {
    @Test func registrationsSurviveASaveAndLoad() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("callapi-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = DeviceStore(path: PushConfiguration.devicesFile(inDataDirectory: directory.path))
        #expect(try store.load() == DeviceRegistry())
        var registry = DeviceRegistry()
        #expect(registry.register(PushTestKit.apnsDevice(), for: "1002", now: 5) == nil)
        #expect(registry.register(PushTestKit.fcmDevice(), for: "1002", now: 6) == nil)
        try store.save(registry)
        #expect(try store.load() == registry)
        #expect(!FileManager.default.fileExists(atPath: store.path + ".tmp"))
    }

    @Test func aCorruptStoreIsAClearError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("callapi-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: path) }
        try Data("not json".utf8).write(to: path)
        #expect(throws: DeviceStore.StoreError.self) { try DeviceStore(path: path.path).load() }
    }

    @Test func aTokenMovesToTheUserWhoRegistersItLast() {
        var registry = DeviceRegistry()
        let device = PushTestKit.apnsDevice()
        _ = registry.register(device, for: "1002", now: 0)
        _ = registry.register(device, for: "1003", now: 1)
        #expect(!registry.hasDevices("1002"))
        #expect(registry.hasDevices("1003"))
    }
}
