import CallAPITesting
import Testing

@testable import CallAPI

@Suite("RTC engine listeners")
struct RTCEngineListenerTests {
    @Test("every listener gets every event, in the order the listeners were added")
    func everyListenerInOrder() {
        let world = SimulatedRTCWorld(clock: ManualClock())
        let engine = world.engine(userId: 1)
        let order = Locked<[String]>([])
        engine.addEventListener { event in order.withLock { $0.append("first \(event)") } }
        engine.addEventListener { event in order.withLock { $0.append("second \(event)") } }
        engine.emit(.localFirstVideoFrameCaptured)
        engine.emit(.error(code: 7, message: "x"))
        #expect(
            order.withLock { $0 } == [
                "first localFirstVideoFrameCaptured", "second localFirstVideoFrameCaptured",
                "first error(code: 7, message: \"x\")", "second error(code: 7, message: \"x\")",
            ])
    }

    @Test("a removed listener gets nothing more; the others go on")
    func removedListener() {
        let engine = SimulatedRTCWorld(clock: ManualClock()).engine(userId: 1)
        let (kept, removed) = (EventLog(), EventLog())
        engine.addEventListener(kept.listener)
        let token = engine.addEventListener(removed.listener)
        engine.emit(.localFirstVideoFrameCaptured)
        engine.removeEventListener(token)
        engine.emit(.error(code: 1, message: "after"))
        #expect(kept.all == [.localFirstVideoFrameCaptured, .error(code: 1, message: "after")])
        #expect(removed.all == [.localFirstVideoFrameCaptured])
    }

    @Test("a token of another engine removes nothing")
    func foreignToken() {
        let world = SimulatedRTCWorld(clock: ManualClock())
        let (one, two) = (world.engine(userId: 1), world.engine(userId: 2))
        let log = EventLog()
        one.addEventListener(log.listener)
        let foreign = two.addEventListener { _ in }
        one.removeEventListener(foreign)
        one.emit(.localFirstVideoFrameCaptured)
        #expect(log.all == [.localFirstVideoFrameCaptured])
        #expect(one.listenerCount == 1)
    }

    @Test("a listener may add and remove listeners while an event is delivered; changes apply from the next event")
    func reentrantListeners() {
        let engine = SimulatedRTCWorld(clock: ManualClock()).engine(userId: 1)
        let late = EventLog()
        let token = Locked<RTCEventListenerToken?>(nil)
        token.withLock {
            $0 = engine.addEventListener { [engine] _ in
                if let own = token.withLock({ $0 }) { engine.removeEventListener(own) }
                engine.addEventListener(late.listener)
            }
        }
        engine.emit(.localFirstVideoFrameCaptured)
        #expect(late.all.isEmpty)
        engine.emit(.error(code: 2, message: "next"))
        #expect(late.all == [.error(code: 2, message: "next")])
        #expect(engine.listenerCount == 1)
    }

    @Test("a channel listener gets that channel's events and the engine-wide ones, not another channel's")
    func channelListener() {
        let engine = SimulatedRTCWorld(clock: ManualClock()).engine(userId: 1)
        let log = EventLog()
        engine.addEventListener(channel: "call", log.listener)
        let events: [RTCEngineEvent] = [
            .localJoined(channel: "call", uid: 1), .localJoined(channel: "showroom", uid: 1),
            .localFirstVideoFrameCaptured, .remoteFirstVideoFrameDecoded(channel: "showroom", uid: 3),
            .error(code: 5, message: "engine"),
        ]
        for event in events { engine.emit(event) }
        #expect(
            log.all == [
                .localJoined(channel: "call", uid: 1), .localFirstVideoFrameCaptured,
                .error(code: 5, message: "engine"),
            ])
    }

    @Test("CallAPI adds one listener at initialize and removes it at deinitialize; the app's stays")
    func callAPIListenerLifetime() async {
        let world = SimulatedRTCWorld(clock: ManualClock())
        let network = InMemorySignalNetwork(clock: world.clock)
        let engine = world.engine(userId: 1)
        let appLog = EventLog()
        engine.addEventListener(appLog.listener)
        let api = CallApiImpl()
        api.initialize(config: CallConfig(userId: 1, rtcEngine: engine, signalClient: network.client(userId: 1)))
        #expect(engine.listenerCount == 2)
        await api.deinitialize()
        #expect(engine.listenerCount == 1)
        engine.emit(.localFirstVideoFrameCaptured)
        #expect(appLog.all == [.localFirstVideoFrameCaptured])
    }

    @Test("an app that listens to the call's channel from joinRTCStart sees the call's events beside CallAPI")
    func appListensFromJoinRTCStart() {
        let harness = CallHarness(timing: .init(joinLatencyMillis: 50, firstFrameLatencyMillis: 30))
        let app = ChannelListeningApp(api: harness[1].api, engine: harness[1].engine)
        harness[1].api.addListener(listener: app)
        harness[1].engine.joinSecondaryChannel("elsewhere", token: "t", uid: 1, media: .audience)
        harness[1].api.call(remoteUserId: 2, completion: nil)
        harness.clock.advance(byMillis: 100)
        harness[2].api.accept(remoteUserId: 1, completion: nil)
        harness.clock.advance(byMillis: 200)
        #expect(harness[1].listener.lastState?.state == .connected, "CallAPI still gets the events it needs")
        let room = harness[1].roomId
        #expect(app.listenedChannel == room)
        #expect(app.log.all.contains(.localJoined(channel: room, uid: 1)))
        #expect(app.log.all.contains(.remoteJoined(channel: room, uid: 2)))
        #expect(app.log.all.contains(.remoteFirstVideoFrameDecoded(channel: room, uid: 2)))
        #expect(!app.log.all.contains { $0.channel == "elsewhere" }, "only the call's channel")
        harness[1].api.hangup(remoteUserId: 2, reason: nil, completion: nil)
        #expect(harness[1].engine.listenerCount == 1, "the app removed its listener at localLeft")
    }
}

/// What the integration guide tells apps to do: listen to the call's channel from `joinRTCStart` on,
/// stop at `localLeft`.
private final class ChannelListeningApp: CallApiListenerProtocol {
    let log = EventLog()
    private let api: CallApiImpl
    private let engine: any CallRTCEngine
    private let listening = Locked<(token: RTCEventListenerToken?, channel: String?)>((nil, nil))

    init(api: CallApiImpl, engine: any CallRTCEngine) {
        self.api = api
        self.engine = engine
    }

    var listenedChannel: String? { listening.withLock { $0.channel } }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {}

    func onCallEventChanged(with event: CallEvent, eventReason: String?) {
        switch event {
        case .joinRTCStart:
            let room = api.getRoomId()
            let token = engine.addEventListener(channel: room, log.listener)
            listening.withLock { $0 = (token, room) }
        case .localLeft:
            guard let token = listening.withLock({ $0.token }) else { return }
            engine.removeEventListener(token)
        default:
            break
        }
    }
}
