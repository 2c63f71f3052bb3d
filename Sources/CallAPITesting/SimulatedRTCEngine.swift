import CallAPI

/// One user's engine in a ``SimulatedRTCWorld``. Besides the `CallRTCEngine` methods it shows what it was
/// asked to do (channels, media, preview, canvases, volumes) so tests can check that a call cleaned up.
///
/// Listeners are called on the thread that caused the event (the caller of a method, or the clock's when
/// the world has latencies).
public final class SimulatedRTCEngine: CallRTCEngine {
    /// The join failure code for a channel the engine is already in (Agora's "join rejected").
    public static let alreadyInChannelCode = 17

    private struct Secondary: Sendable {
        var media: RTCMediaOptions
        var session: Int
    }

    private struct State: Sendable {
        var channel: String?
        var secondaries: [String: Secondary] = [:]
        var media: RTCMediaOptions?
        var session = 0
        var previewing = false
        var localCanvas: (any CallCanvas)?
        var remoteCanvases: [UInt: any CallCanvas] = [:]
        var volumes: [UInt: Int] = [:]
        var token: String?
        var joins = 0
        var leaves = 0
    }

    public let userId: UInt
    /// Which of its user's devices this engine is (0: the first).
    public let device: Int
    private let state = Locked(State())
    private let listeners = RTCEventListeners()
    private weak let world: SimulatedRTCWorld?

    init(userId: UInt, device: Int, world: SimulatedRTCWorld) {
        self.userId = userId
        self.device = device
        self.world = world
    }

    private var key: SimulatedRTCWorld.EngineKey { .init(uid: userId, device: device) }

    // MARK: - What the engine was asked

    /// The channel joined (or being joined), if any.
    public var channel: String? { state.withLock { $0.channel } }
    /// What it publishes and subscribes.
    public var media: RTCMediaOptions? { state.withLock { $0.media } }
    /// The secondary channels joined (or being joined), sorted.
    public var secondaryChannels: [String] { state.withLock { $0.secondaries.keys.sorted() } }
    /// What it publishes and subscribes in the secondary channel `channel`.
    public func media(inSecondary channel: String) -> RTCMediaOptions? {
        state.withLock { $0.secondaries[channel]?.media }
    }
    /// How many listeners its events have.
    public var listenerCount: Int { listeners.count }
    public var isPreviewing: Bool { state.withLock { $0.previewing } }
    public var localCanvas: (any CallCanvas)? { state.withLock { $0.localCanvas } }
    /// Canvases set for remote users and not released.
    public var remoteCanvases: [UInt: any CallCanvas] { state.withLock { $0.remoteCanvases } }
    /// Playback volume set for `uid` (100 when never set).
    public func playbackVolume(of uid: UInt) -> Int { state.withLock { $0.volumes[uid] ?? 100 } }
    /// The token of the last join or renewal.
    public var token: String? { state.withLock { $0.token } }
    public var joinCount: Int { state.withLock { $0.joins } }
    public var leaveCount: Int { state.withLock { $0.leaves } }
    /// Whether nothing of a call remains: no call channel, no preview, no canvases (secondary channels are
    /// the app's, not the call's).
    public var isReleased: Bool {
        state.withLock { $0.channel == nil && !$0.previewing && $0.localCanvas == nil && $0.remoteCanvases.isEmpty }
    }

    /// Reports `event` as if the SDK had (an error, a token about to expire...).
    public func emit(_ event: RTCEngineEvent) {
        listeners.emit(event)
    }

    /// The process died: the others see this user drop out (reason 1) of every channel; this engine
    /// reports nothing and comes back empty, with no listeners, as a new process's engine would.
    public func crash() {
        let channels = state.withLock { state in
            let channels = [state.channel].compactMap { $0 } + state.secondaries.keys
            let joins = state.joins
            let leaves = state.leaves
            state = State()
            state.joins = joins
            state.leaves = leaves
            return channels
        }
        listeners.removeAll()
        for channel in channels { _ = world?.leave(key, channel: channel, dropped: true) }
    }

    func isCurrent(session: Int) -> Bool {
        state.withLock { state in
            session != 0 && (state.session == session || state.secondaries.values.contains { $0.session == session })
        }
    }

    /// A join failed: a secondary channel is forgotten (the call channel stays until CallAPI leaves it).
    func failJoin(_ channel: String, session: Int, code: Int) {
        state.withLock { state in
            if state.secondaries[channel]?.session == session { state.secondaries[channel] = nil }
        }
        emit(.joinFailed(channel: channel, code: code, message: "simulated join failure"))
    }

    /// What the engine publishes and subscribes in the channel of join `session`.
    func media(session: Int) -> RTCMediaOptions? {
        state.withLock { state in
            if state.session == session { return state.media }
            return state.secondaries.values.first { $0.session == session }?.media
        }
    }

    /// Whether the engine is in `channel` (or joining it), as call or secondary channel.
    private func isIn(_ channel: String) -> Bool {
        state.withLock { $0.channel == channel || $0.secondaries[channel] != nil }
    }

    private func rejectJoin(_ channel: String) {
        emit(.joinFailed(channel: channel, code: Self.alreadyInChannelCode, message: "already in \(channel)"))
    }

    // MARK: - CallRTCEngine

    @discardableResult
    public func addEventListener(_ listener: @escaping @Sendable (RTCEngineEvent) -> Void) -> RTCEventListenerToken {
        listeners.add(listener)
    }

    public func removeEventListener(_ token: RTCEventListenerToken) {
        listeners.remove(token)
    }

    public func joinChannel(_ channel: String, token: String, uid: UInt, media: RTCMediaOptions) {
        guard let world else { return }
        if state.withLock({ $0.secondaries[channel] != nil }) { return rejectJoin(channel) }
        if self.channel != nil { leaveChannel() }
        let session = world.makeSession()
        state.withLock { state in
            state.channel = channel
            state.media = media
            state.token = token
            state.joins += 1
            state.session = session
        }
        world.join(.init(uid: uid, device: device), channel: channel, media: media, session: session)
    }

    public func updateMedia(_ media: RTCMediaOptions) {
        guard
            let channel = state.withLock({ state -> String? in
                state.media = media
                return state.channel
            })
        else { return }
        world?.update(key, channel: channel, media: media)
    }

    public func leaveChannel() {
        let left = state.withLock { state -> String? in
            defer {
                state.channel = nil
                state.media = nil
                state.session = 0
            }
            if state.channel != nil { state.leaves += 1 }
            return state.channel
        }
        guard let left, world?.leave(key, channel: left, dropped: false) == true else { return }
        emit(.localLeft(channel: left))
    }

    public func joinSecondaryChannel(_ channel: String, token: String, uid: UInt, media: RTCMediaOptions) {
        guard let world else { return }
        if isIn(channel) { return rejectJoin(channel) }
        let session = world.makeSession()
        state.withLock { $0.secondaries[channel] = Secondary(media: media, session: session) }
        world.join(.init(uid: uid, device: device), channel: channel, media: media, session: session)
    }

    public func updateSecondaryChannelMedia(_ channel: String, media: RTCMediaOptions) {
        let known = state.withLock { state -> Bool in
            guard state.secondaries[channel] != nil else { return false }
            state.secondaries[channel]?.media = media
            return true
        }
        if known { world?.update(key, channel: channel, media: media) }
    }

    public func leaveSecondaryChannel(_ channel: String) {
        guard state.withLock({ $0.secondaries.removeValue(forKey: channel) }) != nil else { return }
        if world?.leave(key, channel: channel, dropped: false) == true { emit(.localLeft(channel: channel)) }
    }

    public func setRemotePlaybackVolume(_ volume: Int, uid: UInt) {
        state.withLock { $0.volumes[uid] = volume }
    }

    public func setLocalCanvas(_ view: (any CallCanvas)?) {
        state.withLock { $0.localCanvas = view }
    }

    public func setRemoteCanvas(_ view: (any CallCanvas)?, uid: UInt) {
        state.withLock { $0.remoteCanvases[uid] = view }
    }

    public func startPreview() {
        let started = state.withLock { state -> Bool in
            defer { state.previewing = true }
            return !state.previewing
        }
        guard started, let world else { return }
        world.after(world.frameIntervalMillis) { [weak self] in
            guard self?.isPreviewing == true else { return }
            self?.emit(.localFirstVideoFrameCaptured)
        }
    }

    public func stopPreview() {
        state.withLock { $0.previewing = false }
    }

    public func renewToken(_ token: String) {
        state.withLock { $0.token = token }
    }

    public func ntpWallTimeMillis() -> UInt64 { UInt64(max(0, world?.clock.nowMillis() ?? 0)) }
}

/// A stand-in view for tests and demos on platforms without UI.
public final class TestCanvas: CallCanvas {
    public let name: String
    public init(_ name: String = "canvas") { self.name = name }
}
