import CallAPI

/// A media plane inside one process: engines that share channels, join after a latency, and report the
/// RTC events a real SDK would (joined, remote joined/left, first frames), on a clock of your choosing.
///
/// With a ``ManualClock`` nothing happens until you advance it; with zero latencies events are reported
/// at once, on the thread that caused them.
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

    struct Member: Sendable {
        var uid: UInt
        var media: RTCMediaOptions
        var session: Int
        /// (publisher uid, is video) pairs whose first frame this member has already decoded.
        var framesSeen: Set<FrameKey> = []
    }

    struct FrameKey: Hashable, Sendable {
        var publisher: UInt
        var video: Bool
    }

    private struct State: Sendable {
        var timing: Timing
        var channels: [String: [UInt: Member]] = [:]
        var engines: [UInt: SimulatedRTCEngine] = [:]
        var joinFailures: [UInt: Int] = [:]
        var nextSession = 0
    }

    private let state: Locked<State>
    public let clock: any CallClock

    public init(clock: any CallClock, timing: Timing = Timing()) {
        self.clock = clock
        state = Locked(State(timing: timing))
    }

    /// The engine of `userId` (the same one each time).
    public func engine(userId: UInt) -> SimulatedRTCEngine {
        state.withLock { state in
            if let existing = state.engines[userId] { return existing }
            let engine = SimulatedRTCEngine(userId: userId, world: self)
            state.engines[userId] = engine
            return engine
        }
    }

    public var timing: Timing {
        get { state.withLock { $0.timing } }
        set { state.withLock { $0.timing = newValue } }
    }

    /// The uids in `channel`.
    public func members(of channel: String) -> [UInt] {
        state.withLock { ($0.channels[channel] ?? [:]).keys.sorted() }
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

    func join(_ uid: UInt, channel: String, media: RTCMediaOptions, session: Int) {
        let (delay, failure) = state.withLock { state in
            (state.timing.joinLatencyMillis, state.joinFailures.removeValue(forKey: uid))
        }
        after(delay) { [self] in
            if let failure {
                engineOf(uid)?.failJoin(channel, session: session, code: failure)
                return
            }
            completeJoin(uid, channel: channel, media: media, session: session)
        }
    }

    private func completeJoin(_ uid: UInt, channel: String, media joinMedia: RTCMediaOptions, session: Int) {
        guard let engine = engineOf(uid), engine.isCurrent(session: session) else { return }
        // What the engine was asked to publish since the join began counts, as with a real SDK.
        let media = engine.media(session: session) ?? joinMedia
        let others = state.withLock { state -> [UInt] in
            let others = Array((state.channels[channel] ?? [:]).keys)
            state.channels[channel, default: [:]][uid] = Member(uid: uid, media: media, session: session)
            return others
        }
        let me = engineOf(uid)
        me?.emit(.localJoined(channel: channel, uid: uid))
        if media.publishMicrophone { me?.emit(.localFirstAudioFramePublished(channel: channel)) }
        if media.publishCamera { me?.emit(.localFirstVideoFramePublished(channel: channel)) }
        for other in others {
            me?.emit(.remoteJoined(channel: channel, uid: other))
            engineOf(other)?.emit(.remoteJoined(channel: channel, uid: uid))
        }
        mediaChanged(in: channel, by: uid)
    }

    /// `uid` changed what it publishes and subscribes in `channel`: the others hear of a change in what it
    /// publishes, and first frames now due are scheduled.
    func update(_ uid: UInt, channel: String, media: RTCMediaOptions) {
        let change = state.withLock { state -> (old: RTCMediaOptions, others: [UInt])? in
            guard let old = state.channels[channel]?[uid]?.media else { return nil }
            state.channels[channel]?[uid]?.media = media
            return (old, (state.channels[channel] ?? [:]).keys.filter { $0 != uid })
        }
        guard let change else { return }
        if change.old.publishMicrophone != media.publishMicrophone || change.old.publishCamera != media.publishCamera {
            for other in change.others.sorted() {
                engineOf(other)?.emit(
                    .remotePublishingChanged(
                        channel: channel, uid: uid, audio: media.publishMicrophone, video: media.publishCamera))
            }
        }
        mediaChanged(in: channel, by: uid)
    }

    /// Removes `uid` from `channel`; whether it was in. `dropped`: it vanished (reason 1) rather than quit
    /// (reason 0).
    func leave(_ uid: UInt, channel: String, dropped: Bool) -> Bool {
        let others = state.withLock { state -> [UInt]? in
            guard let members = state.channels[channel], members[uid] != nil else { return nil }
            state.channels[channel]?[uid] = nil
            if state.channels[channel]?.isEmpty == true { state.channels[channel] = nil }
            return members.keys.filter { $0 != uid }.sorted()
        }
        guard let others else { return false }
        for other in others {
            engineOf(other)?.emit(.remoteLeft(channel: channel, uid: uid, reason: dropped ? 1 : 0))
        }
        return true
    }

    /// After someone joined or changed what it publishes/subscribes: schedule the first frames now due.
    private func mediaChanged(in channel: String, by uid: UInt) {
        let (members, timing) = state.withLock { ($0.channels[channel] ?? [:], $0.timing) }
        let delay = timing.firstFrameLatencyMillis + timing.frameIntervalMillis
        for subscriber in members.values {
            for publisher in members.values where publisher.uid != subscriber.uid {
                guard subscriber.uid == uid || publisher.uid == uid else { continue }
                let kinds: [(video: Bool, flows: Bool)] = [
                    (true, publisher.media.publishCamera && subscriber.media.subscribeVideo),
                    (false, publisher.media.publishMicrophone && subscriber.media.subscribeAudio),
                ]
                for kind in kinds where kind.flows {
                    let key = FrameKey(publisher: publisher.uid, video: kind.video)
                    let (sub, pub) = (subscriber, publisher)
                    after(delay) { [self] in
                        firstFrame(key, to: sub.uid, session: sub.session, from: pub.session, in: channel)
                    }
                }
            }
        }
    }

    private func firstFrame(
        _ key: FrameKey, to subscriber: UInt, session: Int, from publisherSession: Int, in channel: String
    ) {
        let due = state.withLock { state -> Bool in
            guard let sub = state.channels[channel]?[subscriber], sub.session == session,
                state.channels[channel]?[key.publisher]?.session == publisherSession,
                !sub.framesSeen.contains(key)
            else { return false }
            state.channels[channel]?[subscriber]?.framesSeen.insert(key)
            return true
        }
        guard due else { return }
        engineOf(subscriber)?.emit(
            key.video
                ? .remoteFirstVideoFrameDecoded(channel: channel, uid: key.publisher)
                : .remoteFirstAudioFrameDecoded(channel: channel, uid: key.publisher))
    }

    func after(_ millis: Int64, _ action: @escaping @Sendable () -> Void) {
        if millis <= 0 {
            action()
        } else {
            _ = clock.schedule(afterMillis: millis, action)
        }
    }

    var frameIntervalMillis: Int64 { state.withLock { $0.timing.frameIntervalMillis } }

    private func engineOf(_ uid: UInt) -> SimulatedRTCEngine? { state.withLock { $0.engines[uid] } }
}
