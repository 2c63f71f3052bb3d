import CallAPI
import CallAPITesting
import Testing

/// User 1 calls user 2, who is logged in on two devices, A and B, over the in-memory network: with the network
/// copying each device's messages to its user's other devices (as our server does) and without (a channel that
/// cannot, where the caller's notice must be enough).
@Suite("Several devices of one user")
struct MultiDeviceTests {
    final class Harness: Sendable {
        struct Device: Sendable {
            let api: CallApiImpl
            let listener: RecordingCallListener
            let engine: SimulatedRTCEngine
        }

        let clock = ManualClock()
        let network: InMemorySignalNetwork
        let world: SimulatedRTCWorld
        let caller: Device
        let a: Device
        let b: Device
        /// A second device of the caller user, when asked for.
        let callerB: Device?
        static let ringTimeoutMillis: UInt64 = 15_000

        init(copies: Bool, latencyMillis: Int64 = 20, callerDevices: Int = 1) {
            network = InMemorySignalNetwork(clock: clock, latencyMillis: latencyMillis)
            network.copiesToOwnDevices = copies
            world = SimulatedRTCWorld(clock: clock)
            caller = Self.device(user: 1, index: 0, signal: network.client(userId: 1), world, clock)
            a = Self.device(user: 2, index: 0, signal: network.client(userId: 2), world, clock)
            b = Self.device(user: 2, index: 1, signal: network.addDevice(userId: 2), world, clock)
            callerB =
                callerDevices > 1
                ? Self.device(user: 1, index: 1, signal: network.addDevice(userId: 1), world, clock) : nil
        }

        private static func device(
            user: UInt, index: Int, signal: InMemorySignalClient, _ world: SimulatedRTCWorld, _ clock: ManualClock
        ) -> Device {
            let device = Device(
                api: CallApiImpl(deviceId: "device-\(user)-\(index)"), listener: RecordingCallListener(),
                engine: world.engine(userId: user, device: index))
            device.api.addListener(listener: device.listener)
            device.api.initialize(
                config: CallConfig(
                    appId: "test", userId: user, rtcEngine: device.engine, signalClient: signal, clock: clock))
            var config = PrepareConfig()
            config.roomId = "room-\(user)"
            config.callTimeoutMillisecond = ringTimeoutMillis
            device.api.prepareForCall(prepareConfig: config, completion: nil)
            return device
        }

        /// User 1 calls user 2; both devices ring.
        func ring() {
            caller.api.call(remoteUserId: 2, completion: nil)
            clock.advance(byMillis: 100)
        }

        /// What device `index` of user 2 sent of `actions`.
        func sent(byDevice index: Int, _ actions: [MessageAction]) -> [CallMessage] {
            network.sentMessages.filter { $0.from == 2 && $0.fromDevice == index }
                .compactMap { try? CallMessage.decode($0.text).message }
                .filter { actions.contains($0.action) }
        }
    }

    @Test(arguments: [true, false])
    func acceptOnAStopsBWithAnsweredElsewhereAndTheCallOutlivesBsRingTimeout(copies: Bool) {
        let h = Harness(copies: copies)
        h.ring()
        #expect(h.a.api.state == .calling && h.b.api.state == .calling)
        h.a.api.accept(remoteUserId: 1, completion: nil)
        h.clock.advance(byMillis: 200)
        #expect(h.caller.api.state == .connected)
        #expect(h.a.api.state == .connected)
        #expect(h.b.api.state == .prepared)
        #expect(h.b.listener.lastState?.reason == .answeredElsewhere)
        #expect(h.b.listener.events.contains(.answeredElsewhere))
        #expect(h.b.engine.channel == nil, "B left RTC")
        h.clock.advance(byMillis: Int64(Harness.ringTimeoutMillis) + 5_000)
        #expect(h.caller.api.state == .connected)
        #expect(h.a.api.state == .connected)
        #expect(h.sent(byDevice: 1, [.cancelCall, .reject, .hangup]).isEmpty, "B told the caller nothing")
        #expect(h.world.members(of: "room-1") == [1, 2])
    }

    @Test(arguments: [true, false])
    func aRejectOnBAfterAAnsweredIsIgnoredByTheCaller(copies: Bool) {
        let h = Harness(copies: copies, latencyMillis: 100)
        h.ring()
        h.a.api.accept(remoteUserId: 1, completion: nil)
        h.clock.advance(byMillis: 10)
        // B has not heard of A's accept yet: its reject crosses it and reaches the caller after it.
        h.b.api.reject(remoteUserId: 1, reason: "declined on my watch", completion: nil)
        h.clock.advance(byMillis: 500)
        #expect(h.sent(byDevice: 1, [.reject]).count == 1)
        #expect(h.caller.api.state == .connected)
        #expect(h.a.api.state == .connected)
        #expect(h.b.listener.lastState?.reason == .localRejected)
        h.clock.advance(byMillis: Int64(Harness.ringTimeoutMillis) + 5_000)
        #expect(h.caller.api.state == .connected)
        #expect(h.a.api.state == .connected)
    }

    @Test(arguments: [true, false])
    func aRejectOnBBeforeAnyoneAnsweredStopsEveryDevice(copies: Bool) {
        let h = Harness(copies: copies)
        h.ring()
        h.b.api.reject(remoteUserId: 1, reason: nil, completion: nil)
        h.clock.advance(byMillis: 200)
        #expect(h.caller.api.state == .prepared)
        #expect(h.caller.listener.lastState?.reason == .remoteRejected)
        #expect(h.a.api.state == .prepared)
        #expect(h.a.listener.lastState?.reason == .rejectedElsewhere)
        #expect(h.a.listener.events.contains(.rejectedElsewhere))
        #expect(h.a.engine.channel == nil)
        #expect(h.sent(byDevice: 0, [.cancelCall, .reject, .hangup]).isEmpty, "A told the caller nothing")
    }

    @Test(arguments: [true, false])
    func bothAcceptingAtOnceMakesOneCallWithOneWinner(copies: Bool) {
        let h = Harness(copies: copies)
        h.ring()
        h.a.api.accept(remoteUserId: 1, completion: nil)
        h.b.api.accept(remoteUserId: 1, completion: nil)
        h.clock.advance(byMillis: 300)
        let states = [h.a.api.state, h.b.api.state]
        #expect(states.filter { $0 == .connected }.count == 1)
        #expect(states.filter { $0 == .prepared }.count == 1)
        let loser = h.a.api.state == .prepared ? h.a : h.b
        #expect(loser.listener.lastState?.reason == .answeredElsewhere)
        #expect(loser.engine.channel == nil)
        #expect(h.caller.api.state == .connected)
        #expect(h.caller.listener.connectCount == 1)
        h.clock.advance(byMillis: Int64(Harness.ringTimeoutMillis) + 5_000)
        #expect(h.caller.api.state == .connected)
        #expect([h.a.api.state, h.b.api.state].filter { $0 == .connected }.count == 1)
    }

    @Test(arguments: [true, false])
    func aCallFromTheCallersOtherDeviceWhileTheFirstRingsIsBusyAndDoesNotRestartTheRing(copies: Bool) throws {
        let h = Harness(copies: copies, callerDevices: 2)
        let second = try #require(h.callerB)
        h.ring()
        let first = h.caller.api.getCallId()
        h.clock.advance(byMillis: 5_000)
        second.api.call(remoteUserId: 2, completion: nil)
        h.clock.advance(byMillis: 200)
        #expect(second.api.state == .prepared)
        #expect(second.listener.lastState?.reason == .remoteCallBusy)
        #expect(h.caller.api.state == .calling)
        for device in [h.a, h.b] {
            #expect(device.api.state == .calling)
            #expect(device.api.getCallId() == first)
        }
        // The ring still ends one ring timeout after the first call, not after the second.
        h.clock.advance(byMillis: Int64(Harness.ringTimeoutMillis) - 5_200 + 100)
        #expect(h.a.api.state == .prepared && h.b.api.state == .prepared)
        #expect(h.caller.api.state == .prepared)
        let reasons = [h.a, h.b].compactMap { $0.listener.lastState?.reason }
        #expect(reasons.contains(.callingTimeout))
    }

    @Test(arguments: [true, false])
    func aCallFromTheCallersOtherDeviceDuringTheCallIsBusyAndTheCallGoesOn(copies: Bool) throws {
        let h = Harness(copies: copies, callerDevices: 2)
        let second = try #require(h.callerB)
        h.ring()
        h.a.api.accept(remoteUserId: 1, completion: nil)
        h.clock.advance(byMillis: 200)
        #expect(h.caller.api.state == .connected && h.a.api.state == .connected)
        second.api.call(remoteUserId: 2, completion: nil)
        h.clock.advance(byMillis: 200)
        #expect(second.listener.lastState?.reason == .remoteCallBusy)
        #expect(h.caller.api.state == .connected)
        #expect(h.a.api.state == .connected)
        #expect(h.b.api.state == .prepared)
    }

    @Test func aHangupFromTheDeviceInTheCallEndsItForTheCaller() {
        let h = Harness(copies: true)
        h.ring()
        h.a.api.accept(remoteUserId: 1, completion: nil)
        h.clock.advance(byMillis: 200)
        h.a.api.hangup(remoteUserId: 1, reason: nil, completion: nil)
        h.clock.advance(byMillis: 200)
        #expect(h.caller.api.state == .prepared)
        #expect(h.caller.listener.lastState?.reason == .remoteHangup)
        #expect(h.b.listener.lastState?.reason == .answeredElsewhere)
    }

    @Test func aDevicesMessagesCarryItsDeviceId() {
        let h = Harness(copies: true)
        h.ring()
        let call = h.network.sentMessages.first { $0.from == 1 }.flatMap { try? CallMessage.decode($0.text).message }
        #expect(call?.deviceId == "device-1-0")
        h.a.api.accept(remoteUserId: 1, completion: nil)
        #expect(h.sent(byDevice: 0, [.accept]).first?.deviceId == "device-2-0")
    }

    @Test func deviceIdsRoundTripAndABadOneIsRefusedWithAClearError() throws {
        var notice = CallMessage(action: .cancelCall, timestamp: 1, messageId: 3, fromUserId: 1, callId: "c")
        notice.deviceId = "phone"
        notice.answeredByDevice = "tablet"
        let decoded = try CallMessage.decode(notice.encoded()).message
        #expect(decoded == notice)
        let tooLong = String(repeating: "x", count: CallMessage.maxDeviceIdLength + 1)
        for bad in ["\"\"", "7", "\"\(tooLong)\""] {
            let text =
                #"{"message_action":2,"message_version":"1.0","message_timestamp":1,"messageId":1,"fromUserId":1,"#
                + #""callId":"c","deviceId":"# + bad + "}"
            #expect(throws: WireError.invalidField("deviceId")) { try CallMessage.decode(text) }
        }
    }
}
