import CallAPI
import CallAPITesting
import Testing

/// A deployed client (iOS flavour, which sends no settled notice) calls user 2, logged in on two devices of ours,
/// A and B. Without the caller's word, the devices settle the call among themselves: each one that accepts repeats
/// its accept to its own user, and of two that both accepted the earlier accept keeps the call
/// (docs/multi-device.md, "When the caller sends no notice").
@Suite("Several devices answering a deployed client's call")
struct MultiDeviceLegacyCallerTests {
    final class Harness: Sendable {
        let clock = ManualClock()
        let network: InMemorySignalNetwork
        let world: SimulatedRTCWorld
        let caller: LegacyCallEndpoint
        let a: MultiDeviceTests.Harness.Device
        let b: MultiDeviceTests.Harness.Device?

        init(copies: Bool, devices: Int = 2) {
            network = InMemorySignalNetwork(clock: clock, latencyMillis: 20)
            network.copiesToOwnDevices = copies
            world = SimulatedRTCWorld(clock: clock)
            caller = LegacyCallEndpoint(.iOS, userId: 9, network: network, world: world, ringTimeoutMillis: 15_000)
            a = Self.device(index: 0, signal: network.client(userId: 2), world, clock)
            b = devices > 1 ? Self.device(index: 1, signal: network.addDevice(userId: 2), world, clock) : nil
        }

        private static func device(
            index: Int, signal: InMemorySignalClient, _ world: SimulatedRTCWorld, _ clock: ManualClock
        ) -> MultiDeviceTests.Harness.Device {
            let device = MultiDeviceTests.Harness.Device(
                api: CallApiImpl(deviceId: "device-2-\(index)"), listener: RecordingCallListener(),
                engine: world.engine(userId: 2, device: index))
            device.api.addListener(listener: device.listener)
            device.api.initialize(
                config: CallConfig(
                    appId: "test", userId: 2, rtcEngine: device.engine, signalClient: signal, clock: clock))
            var config = PrepareConfig()
            config.roomId = "room-2-\(index)"
            config.callTimeoutMillisecond = 15_000
            device.api.prepareForCall(prepareConfig: config, completion: nil)
            return device
        }

        /// The messages one device of user 2 sent to its own user.
        func notices(byDevice index: Int) -> [CallMessage] {
            network.sentMessages.filter { $0.from == 2 && $0.to == 2 && $0.fromDevice == index }
                .compactMap { try? CallMessage.decode($0.text).message }
        }
    }

    @Test func twoDevicesThatAcceptedWithEveryCopyLostAgreeOnTheEarlierOne() throws {
        // The failing chaos seed 1216 (--devices 3 --legacy 2) in small: the copies of both accepts are lost, so
        // each device believed it alone had answered, and both stayed connected.
        let h = Harness(copies: false)
        let b = try #require(h.b)
        h.caller.call(2)
        h.clock.advance(byMillis: 100)
        #expect(h.a.api.state == .calling && b.api.state == .calling)
        h.network.inject(.drop, count: 2, from: 2, to: 2)
        h.a.api.accept(remoteUserId: 9, completion: nil)
        h.clock.advance(byMillis: 200)
        b.api.accept(remoteUserId: 9, completion: nil)
        h.clock.advance(byMillis: 3_000)
        #expect(h.a.api.state == .connected)
        #expect(b.api.state == .prepared)
        #expect(b.listener.lastState?.reason == .answeredElsewhere)
        #expect(b.engine.isReleased, "the losing device left RTC")
        #expect(h.caller.state.type == .connected, "the caller's call lives on with A")
        #expect(h.caller.repeatedMessages.isEmpty, "nothing reached the deployed client twice")
        let bToCaller = h.network.sentMessages.filter { $0.from == 2 && $0.to == 9 && $0.fromDevice == 1 }
        #expect(
            bToCaller.compactMap { try? CallMessage.decode($0.text).message.action } == [.accept],
            "nothing after its accept")
        h.clock.advance(byMillis: 20_000)
        #expect(h.a.api.state == .connected, "the call outlives every ring timer")
    }

    @Test func aDeviceThatAcceptedEndsWhenAnotherRejectedBeforeHearingOfIt() throws {
        // Chaos seeds 34363, 35729 and 96033 (--devices 3 --legacy 2): B rejects 2 ms after A accepted, before A's
        // copy reaches it. The deployed caller ends its call on that reject (its handler has no state guard), so A
        // must not stay connected to a call the caller has left, nor tell the caller anything more.
        let h = Harness(copies: true)
        let b = try #require(h.b)
        h.caller.call(2)
        h.clock.advance(byMillis: 100)
        h.a.api.accept(remoteUserId: 9, completion: nil)
        h.clock.advance(byMillis: 2)
        b.api.reject(remoteUserId: 9, reason: nil, completion: nil)
        h.clock.advance(byMillis: 1_000)
        #expect(h.caller.state.type == .prepared, "the deployed caller ended on B's reject")
        #expect(h.a.api.state == .prepared)
        #expect(h.a.listener.lastState?.reason == .rejectedElsewhere)
        #expect(h.a.engine.isReleased, "A left RTC")
        let aToCaller = h.network.sentMessages.filter { $0.from == 2 && $0.to == 9 && $0.fromDevice == 0 }
        #expect(
            aToCaller.compactMap { try? CallMessage.decode($0.text).message.action } == [.accept],
            "nothing after its accept")
        #expect(h.caller.repeatedMessages.isEmpty)
    }

    @Test func devicesThatAcceptInTheSameMillisecondKeepTheLowerDeviceId() throws {
        let h = Harness(copies: true)
        let b = try #require(h.b)
        h.caller.call(2)
        h.clock.advance(byMillis: 100)
        b.api.accept(remoteUserId: 9, completion: nil)
        h.a.api.accept(remoteUserId: 9, completion: nil)
        h.clock.advance(byMillis: 1_000)
        #expect(h.a.api.state == .connected, "device-2-0 sorts first")
        #expect(b.listener.lastState?.reason == .answeredElsewhere)
        #expect(h.caller.state.type == .connected)
    }

    @Test func aRingingDeviceWhoseCopyWasLostStopsOnARepeat() throws {
        let h = Harness(copies: true)
        let b = try #require(h.b)
        h.caller.call(2)
        h.clock.advance(byMillis: 100)
        // A's accept reaches the caller; its own-device notice, sent next, is lost.
        h.network.inject(.drop, count: 1, from: 2, to: 2)
        h.network.copiesToOwnDevices = false
        h.a.api.accept(remoteUserId: 9, completion: nil)
        h.clock.advance(byMillis: 1_000)
        #expect(b.api.state == .prepared)
        #expect(b.listener.lastState?.reason == .answeredElsewhere)
        #expect(h.notices(byDevice: 0).count == 2, "sent once and repeated once")
        #expect(h.notices(byDevice: 0).allSatisfy { $0.action == .accept && $0.deviceId == "device-2-0" })
    }

    @Test func aDeviceAloneTriesItsNoticeOnceAndTellsTheAppNothing() {
        let h = Harness(copies: true, devices: 1)
        h.caller.call(2)
        h.clock.advance(byMillis: 100)
        h.a.api.accept(remoteUserId: 9, completion: nil)
        h.clock.advance(byMillis: 25_000)
        #expect(h.a.api.state == .connected)
        #expect(h.notices(byDevice: 0).count == 1, "no other device: the send failed and is not repeated")
        #expect(!h.a.listener.records.contains { if case .error = $0 { true } else { false } })
    }

    @Test func repeatsStopWithinTheRetryBound() throws {
        let h = Harness(copies: true)
        let b = try #require(h.b)
        // B's app is gone but its connection stays: every repeat is delivered, none is answered.
        b.api.deinitialize {}
        h.caller.call(2)
        h.clock.advance(byMillis: 100)
        h.a.api.accept(remoteUserId: 9, completion: nil)
        h.clock.advance(byMillis: 60_000)
        let times = h.network.sentMessages.filter { $0.from == 2 && $0.to == 2 }.map(\.sentAtMillis)
        let first = try #require(times.first)
        #expect(times.count > 3, "repeated with backoff")
        #expect(times.allSatisfy { $0 - first < CallReliability.standard.retryBoundMillis })
        #expect(h.a.api.state == .connected)
    }
}
