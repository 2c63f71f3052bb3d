import CallAPI

/// One user's engine in a ``SimulatedRTCWorld``. Besides the `CallRTCEngine` methods it shows what it was
/// asked to do (channel, media, preview, canvases, volumes) so tests can check that a call cleaned up.
public final class SimulatedRTCEngine: CallRTCEngine {
    private struct State: Sendable {
        var handler: (@Sendable (RTCEngineEvent) -> Void)?
        var channel: String?
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
    /// Whether nothing of a call remains: no channel, no preview, no canvases.
    public var isReleased: Bool {
        state.withLock { $0.channel == nil && !$0.previewing && $0.localCanvas == nil && $0.remoteCanvases.isEmpty }
    }

    /// Reports `event` as if the SDK had (an error, a token about to expire...).
    public func emit(_ event: RTCEngineEvent) {
        state.withLock { $0.handler }?(event)
    }

    /// The process died: the others see this user drop out (reason 1); this engine reports nothing and
    /// comes back empty, as a new process's engine would.
    public func crash() {
        state.withLock { state in
            let joins = state.joins
            let leaves = state.leaves
            state = State()
            state.joins = joins
            state.leaves = leaves
        }
        _ = world?.leave(key, dropped: true)
    }

    func isCurrent(session: Int) -> Bool { state.withLock { $0.session == session && session != 0 } }

    // MARK: - CallRTCEngine

    public func setEventHandler(_ handler: (@Sendable (RTCEngineEvent) -> Void)?) {
        state.withLock { $0.handler = handler }
    }

    public func joinChannel(_ channel: String, token: String, uid: UInt, media: RTCMediaOptions) {
        guard let world else { return }
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
        state.withLock { $0.media = media }
        world?.update(key, media: media)
    }

    public func leaveChannel() {
        let wasIn = state.withLock { state -> Bool in
            defer {
                state.channel = nil
                state.media = nil
                state.session = 0
            }
            if state.channel != nil { state.leaves += 1 }
            return state.channel != nil
        }
        guard wasIn, let channel = world?.leave(key, dropped: false) else { return }
        emit(.localLeft(channel: channel))
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
