import CallAPI

/// A media plane inside one process: engines that share channels, join after a latency, and report the
/// RTC events a real SDK would (joined, remote joined/left, first frames), on a clock of your choosing.
///
/// With a ``ManualClock`` nothing happens until you advance it; with zero latencies events are reported
/// at once, on the thread that caused them.
///
/// A user may be in a channel from several devices (``engine(userId:device:)``) under its one uid: the others
/// see the uid join when its first device joins and leave when its last device leaves, so a device that
/// leaves never takes the media of the one still in the call.
public final class SimulatedRTCWorld: Sendable {
    /// Timing of the simulated media plane.
    public struct Timing: Sendable, Equatable {
        /// From `joinChannel` to joined.
        public var joinLatencyMillis: Int64
        /// From "publisher and subscriber both in the channel" to the first frame decoded.
        public var firstFrameLatencyMillis: Int64
        /// Frames per second; the first frame waits for the next frame boundary. 0: no wait.
        public var frameRate: Int

        public init(joinLatencyMillis: Int64 = 0, firstFrameLatencyMillis: Int64 = 0, frameRate: Int = 0) {
            self.joinLatencyMillis = joinLatencyMillis
            self.firstFrameLatencyMillis = firstFrameLatencyMillis
            self.frameRate = frameRate
        }

        var frameIntervalMillis: Int64 { frameRate > 0 ? Int64((1000 + frameRate - 1) / frameRate) : 0 }
    }

    /// One engine: a device of a user.
    struct EngineKey: Hashable, Sendable {
        var uid: UInt
        var device: Int
    }

    struct Member: Sendable {
        var uid: UInt
        var media: RTCMediaOptions
        var session: Int
        /// When it joined, as a count of the world's joins: members are reported in join order, as our RTC
        /// channels list them.
        var joinNumber: Int
        /// (publisher uid, is video) pairs whose first frame this member has already decoded.
        var framesSeen: Set<FrameKey> = []
    }

    struct FrameKey: Hashable, Sendable {
        var publisher: UInt
        var video: Bool
    }

    private struct State: Sendable {
        var timing: Timing
        var channels: [String: [EngineKey: Member]] = [:]
        var engines: [EngineKey: SimulatedRTCEngine] = [:]
        var joinFailures: [UInt: Int] = [:]
        var nextSession = 0
        var joins = 0
    }

    private let state: Locked<State>
    public let clock: any CallClock

    public init(clock: any CallClock, timing: Timing = Timing()) {
        self.clock = clock
        state = Locked(State(timing: timing))
    }

    /// The engine of `userId`'s first device (the same one each time).
    public func engine(userId: UInt) -> SimulatedRTCEngine { engine(userId: userId, device: 0) }

    /// The engine of one of `userId`'s devices (the same one each time for the same pair).
    public func engine(userId: UInt, device: Int) -> SimulatedRTCEngine {
        state.withLock { state in
            let key = EngineKey(uid: userId, device: device)
            if let existing = state.engines[key] { return existing }
            let engine = SimulatedRTCEngine(userId: userId, device: device, world: self)
            state.engines[key] = engine
            return engine
        }
    }

    public var timing: Timing {
        get { state.withLock { $0.timing } }
        set { state.withLock { $0.timing = newValue } }
    }

    /// The uids in `channel`.
    public func members(of channel: String) -> [UInt] {
        state.withLock { Set(($0.channels[channel] ?? [:]).values.map(\.uid)).sorted() }
    }

    /// Every channel with someone in it.
    public var occupiedChannels: [String] { state.withLock { $0.channels.keys.sorted() } }

    /// Makes `userId`'s next join fail with `code`.
    public func failNextJoin(userId: UInt, code: Int = 17) {
        state.withLock { $0.joinFailures[userId] = code }
    }

    // MARK: - Engine operations

    /// A new join session id: events of an earlier session of the same engine are then stale.
    func makeSession() -> Int {
        state.withLock { state in
            state.nextSession += 1
            return state.nextSession
        }
    }

    func join(_ key: EngineKey, channel: String, media: RTCMediaOptions, session: Int) {
        let (delay, failure) = state.withLock { state in
            (state.timing.joinLatencyMillis, state.joinFailures.removeValue(forKey: key.uid))
        }
        after(delay) { [self] in
            if let failure {
                engineOf(key)?.failJoin(channel, session: session, code: failure)
                return
            }
            completeJoin(key, channel: channel, media: media, session: session)
        }
    }

    private func completeJoin(_ key: EngineKey, channel: String, media joinMedia: RTCMediaOptions, session: Int) {
        guard let engine = engineOf(key), engine.isCurrent(session: session) else { return }
        // What the engine was asked to publish since the join began counts, as with a real SDK.
        let media = engine.media(session: session) ?? joinMedia
        let uid = key.uid
        let others = state.withLock { state -> [EngineKey] in
            let others = (state.channels[channel] ?? [:]).sorted { $0.value.joinNumber < $1.value.joinNumber }.map(
                \.key)
            state.joins += 1
            state.channels[channel, default: [:]][key] = Member(
                uid: uid, media: media, session: session, joinNumber: state.joins)
            return others
        }
        engine.emit(.localJoined(channel: channel, uid: uid))
        if media.publishMicrophone { engine.emit(.localFirstAudioFramePublished(channel: channel)) }
        if media.publishCamera { engine.emit(.localFirstVideoFramePublished(channel: channel)) }
        let uidWasIn = others.contains { $0.uid == uid }
        var reported: Set<UInt> = [uid]
        for other in others.map(\.uid) where reported.insert(other).inserted {
            engine.emit(.remoteJoined(channel: channel, uid: other))
        }
        for other in others where other.uid != uid && !uidWasIn {
            engineOf(other)?.emit(.remoteJoined(channel: channel, uid: uid))
        }
        mediaChanged(in: channel, by: key)
    }

    /// The engine `key` changed what it publishes and subscribes in `channel`: the others hear of a change
    /// in what it publishes, and first frames now due are scheduled.
    func update(_ key: EngineKey, channel: String, media: RTCMediaOptions) {
        let change = state.withLock { state -> (old: RTCMediaOptions, others: [EngineKey])? in
            guard let old = state.channels[channel]?[key]?.media else { return nil }
            state.channels[channel]?[key]?.media = media
            return (old, (state.channels[channel] ?? [:]).keys.filter { $0.uid != key.uid })
        }
        guard let change else { return }
        if change.old.publishMicrophone != media.publishMicrophone || change.old.publishCamera != media.publishCamera {
            for other in change.others.sorted(by: { ($0.uid, $0.device) < ($1.uid, $1.device) }) {
                engineOf(other)?.emit(
                    .remotePublishingChanged(
                        channel: channel, uid: key.uid, audio: media.publishMicrophone, video: media.publishCamera))
            }
        }
        mediaChanged(in: channel, by: key)
    }

    /// Removes the engine `key` from `channel`; whether it was in. `dropped`: it vanished (reason 1) rather
    /// than quit (reason 0). The others see its uid leave once no other device of the user is in the channel.
    func leave(_ key: EngineKey, channel: String, dropped: Bool) -> Bool {
        let others = state.withLock { state -> [EngineKey]? in
            guard let members = state.channels[channel], members[key] != nil else { return nil }
            state.channels[channel]?[key] = nil
            if state.channels[channel]?.isEmpty == true { state.channels[channel] = nil }
            return members.keys.filter { $0 != key }.sorted { ($0.uid, $0.device) < ($1.uid, $1.device) }
        }
        guard let others else { return false }
        guard !others.contains(where: { $0.uid == key.uid }) else { return true }
        for other in others {
            engineOf(other)?.emit(.remoteLeft(channel: channel, uid: key.uid, reason: dropped ? 1 : 0))
        }
        return true
    }

    /// After someone joined or changed what it publishes/subscribes: schedule the first frames now due.
    private func mediaChanged(in channel: String, by key: EngineKey) {
        let (members, timing) = state.withLock { ($0.channels[channel] ?? [:], $0.timing) }
        let delay = timing.firstFrameLatencyMillis + timing.frameIntervalMillis
        for (subscriberKey, subscriber) in members {
            for (publisherKey, publisher) in members where publisher.uid != subscriber.uid {
                guard subscriberKey == key || publisherKey == key else { continue }
                let kinds: [(video: Bool, flows: Bool)] = [
                    (true, publisher.media.publishCamera && subscriber.media.subscribeVideo),
                    (false, publisher.media.publishMicrophone && subscriber.media.subscribeAudio),
                ]
                for kind in kinds where kind.flows {
                    let frame = FrameKey(publisher: publisher.uid, video: kind.video)
                    let (sub, pub) = (subscriber, publisher)
                    after(delay) { [self] in
                        firstFrame(
                            frame, to: subscriberKey, session: sub.session, from: publisherKey, session: pub.session,
                            in: channel)
                    }
                }
            }
        }
    }

    private func firstFrame(
        _ frame: FrameKey, to subscriber: EngineKey, session: Int, from publisher: EngineKey,
        session publisherSession: Int, in channel: String
    ) {
        let due = state.withLock { state -> Bool in
            guard let sub = state.channels[channel]?[subscriber], sub.session == session,
                state.channels[channel]?[publisher]?.session == publisherSession,
                !sub.framesSeen.contains(frame)
            else { return false }
            state.channels[channel]?[subscriber]?.framesSeen.insert(frame)
            return true
        }
        guard due else { return }
        engineOf(subscriber)?.emit(
            frame.video
                ? .remoteFirstVideoFrameDecoded(channel: channel, uid: frame.publisher)
                : .remoteFirstAudioFrameDecoded(channel: channel, uid: frame.publisher))
    }

    func after(_ millis: Int64, _ action: @escaping @Sendable () -> Void) {
        if millis <= 0 {
            action()
        } else {
            _ = clock.schedule(afterMillis: millis, action)
        }
    }

    var frameIntervalMillis: Int64 { state.withLock { $0.timing.frameIntervalMillis } }

    private func engineOf(_ key: EngineKey) -> SimulatedRTCEngine? { state.withLock { $0.engines[key] } }
}
