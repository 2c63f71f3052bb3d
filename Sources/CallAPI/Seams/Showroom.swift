/// A host's showroom (a live-streaming channel) beside its 1v1 calls: the showroom-to-1v1 scenario.
///
/// The host opens the showroom, a secondary channel of the engine it gives CallAPI, and adds the showroom
/// as a listener of its ``CallApiImpl``. When a call connects, the host stops publishing in the showroom
/// but stays in it, so the audience stays and sees the pause
/// (``RTCEngineEvent/remotePublishingChanged(channel:uid:audio:video:)``); when the call ends (any state
/// out of a call), publishing resumes.
///
/// ```swift
/// let showroom = Showroom(engine: engine, channel: "showroom-42", token: token, uid: hostId)
/// showroom.open()
/// api.addListener(listener: showroom)  // held weakly: keep `showroom`
/// ```
public final class Showroom: CallApiListenerProtocol {
    /// The showroom's channel.
    public let channel: String
    private let engine: any CallRTCEngine
    private let token: String
    private let uid: UInt
    private let media: RTCMediaOptions
    private let machine = Locked(ShowroomMachine())

    /// A showroom in `channel`, joined as `uid` with `token`, publishing as `media` says while no call is
    /// connected.
    public init(
        engine: any CallRTCEngine, channel: String, token: String, uid: UInt, media: RTCMediaOptions = .broadcast
    ) {
        self.engine = engine
        self.channel = channel
        self.token = token
        self.uid = uid
        self.media = media
    }

    /// Whether the host is in the showroom and publishing there now.
    public var isPublishing: Bool {
        if case .live = machine.withLock({ $0.state }) { return true }
        return false
    }

    /// Whether the host is in the showroom (publishing or paused).
    public var isOpen: Bool { machine.withLock { $0.state } != .closed }

    /// Joins the showroom and starts publishing. Joining is reported by the engine's events.
    public func open() { handle(.open(media: media)) }

    /// Leaves the showroom.
    public func close() { handle(.close) }

    public func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        handle(.callState(state))
    }

    private func handle(_ input: ShowroomMachine.Input) {
        // Performed outside the lock: an engine may report (and so call listeners) before it returns.
        for action in machine.withLock({ $0.handle(input) }) {
            switch action {
            case .join(let media): engine.joinSecondaryChannel(channel, token: token, uid: uid, media: media)
            case .updateMedia(let media): engine.updateSecondaryChannelMedia(channel, media: media)
            case .leave: engine.leaveSecondaryChannel(channel)
            }
        }
    }
}
