import CallAPI

/// The showroom scenario's live room: the host's ``Showroom`` beside its calls and one viewer watching it,
/// both narrated on the demo's timelines. Add it as the host's call listener: it passes the states on to
/// the showroom.
final class DemoShowroom: CallApiListenerProtocol {
    /// What the viewer receives from the host.
    enum Seen: Sendable, Equatable {
        case nothing
        case both
        case partly
    }

    private let showroom: Showroom
    private let channel: String
    private let host: UInt
    private let viewer: UInt
    private let viewerEngine: any CallRTCEngine
    private let hostTimeline: TimelineListener
    private let viewerTimeline: TimelineListener
    private let seen = Locked<(publishing: Seen, frame: Bool, token: RTCEventListenerToken?, hostLive: Bool)>(
        (.nothing, false, nil, false))

    init(
        host: UInt, hostEngine: any CallRTCEngine, hostTimeline: TimelineListener, viewer: UInt,
        viewerEngine: any CallRTCEngine, viewerTimeline: TimelineListener, channel: String
    ) {
        showroom = Showroom(engine: hostEngine, channel: channel, token: "demo-token", uid: host)
        self.channel = channel
        self.host = host
        self.viewer = viewer
        self.viewerEngine = viewerEngine
        self.hostTimeline = hostTimeline
        self.viewerTimeline = viewerTimeline
    }

    /// What the viewer sees of the host now: both kinds once a first frame came in, until the host pauses.
    var viewerSees: Seen { seen.withLock { $0.frame ? $0.publishing : .nothing } }

    /// The host goes live; the viewer joins to watch.
    func open() {
        seen.withLock {
            $0.publishing = .both
            $0.hostLive = true
        }
        showroom.open()
        hostTimeline.note("  showroom \(channel): live, publishing")
        let token = viewerEngine.addEventListener(channel: channel) { [weak self] event in self?.viewerGot(event) }
        seen.withLock { $0.token = token }
        viewerEngine.joinChannel(channel, token: "demo-token", uid: viewer, media: .audience)
    }

    /// The viewer leaves and the host closes the showroom.
    func close() {
        viewerEngine.leaveChannel()
        if let token = seen.withLock({ $0.token }) { viewerEngine.removeEventListener(token) }
        showroom.close()
        hostTimeline.note("  showroom \(channel): closed")
    }

    func onCallStateChanged(
        with state: CallStateType, stateReason: CallStateReason, eventReason: String, eventInfo: [String: Any]
    ) {
        showroom.onCallStateChanged(
            with: state, stateReason: stateReason, eventReason: eventReason, eventInfo: eventInfo)
        let live = showroom.isPublishing
        let changed = seen.withLock { seen in
            defer { seen.hostLive = live }
            return seen.token != nil && seen.hostLive != live
        }
        guard changed else { return }
        hostTimeline.note(
            "  showroom \(channel): "
                + (live ? "publishing again" : "publishing paused for the call (still in the showroom)"))
    }

    private func viewerGot(_ event: RTCEngineEvent) {
        switch event {
        case .localJoined:
            viewerTimeline.note("  viewer joined \(channel)")
        case .remoteFirstVideoFrameDecoded(_, let uid) where uid == host:
            seen.withLock { $0.frame = true }
            viewerTimeline.note("  viewer: first video frame of host \(uid)")
        case .remotePublishingChanged(_, let uid, let audio, let video) where uid == host:
            let now: Seen = audio && video ? .both : (audio || video ? .partly : .nothing)
            seen.withLock { $0.publishing = now }
            viewerTimeline.note(
                "  viewer: host \(uid) "
                    + (now == .nothing ? "paused publishing" : "publishes audio \(audio) video \(video)"))
        default:
            break
        }
    }
}
