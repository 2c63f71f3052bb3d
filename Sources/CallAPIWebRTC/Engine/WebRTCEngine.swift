import CGStreamerShim
import CallAPI
import Dispatch
import Foundation

/// A ``CallRTCEngine`` with real media: GStreamer's `webrtcbin`, VP8 video and Opus audio, peer to peer,
/// with a ``WebRTCChannelTransport`` to meet the other members of a channel and exchange descriptions.
///
/// Camera and microphone are test sources unless ``WebRTCMediaSources`` says otherwise; remote audio goes
/// through a `volume` element to a sink that needs no sound device by default. First-frame events are
/// real: `remoteFirstVideoFrameDecoded` comes from a probe after `vp8dec`, `remoteFirstAudioFrameDecoded`
/// after `opusdec`. A ``FrameSnapshotCanvas`` given as a canvas gets the first frame as a PNG.
///
/// ## Threads
/// Every method returns at once. Work happens on the engine's serial queue, which is also where events
/// are reported to every listener, in order (secondary channels' events too). GStreamer calls back on its own threads; those callbacks only read or update
/// the locked state and hop onto the queue.
///
/// ## Media
/// Every peer link negotiates one audio and one video stream, always. What is published and subscribed
/// is switched with valves, and each side tells the other what it subscribes to
/// (``WebRTCSignal/subscription(audio:video:)``), so nothing is sent that nobody decodes.
///
/// ## Several devices
/// An engine joins as its user's uid on ``device``. A user on several devices (a phone and a tablet ringing
/// together) is several members of a channel; the engine links to each, and reports per uid as the seam does:
/// ``RTCEngineEvent/remoteJoined(channel:uid:)`` when the uid's first device arrives,
/// ``RTCEngineEvent/remoteLeft(channel:uid:reason:)`` when its last one goes, one first frame of each kind per uid.
/// Members of the engine's own uid (its user's other devices) get no link.
///
/// ## Secondary channels
/// Each secondary channel (a showroom) is an engine of its own inside this one, with its own pipeline:
/// sources that can be opened twice (test sources, files) work; a camera device that allows one reader
/// does not (give the secondary channel's engine other sources with ``init(transport:sources:label:secondarySources:)``).
public final class WebRTCEngine: CallRTCEngine {
    /// Where camera and microphone come from and where remote audio goes.
    public let sources: WebRTCMediaSources
    let transport: any WebRTCChannelTransport
    let queue: DispatchQueue
    let snapshotQueue: DispatchQueue
    let state = Locked(EngineState())
    let listeners = RTCEventListeners()
    /// The secondary channels' engines, by channel.
    let secondaries = Locked<[String: WebRTCEngine]>([:])
    let label: String
    /// The sources of secondary channels' engines.
    let secondarySources: WebRTCMediaSources
    /// The ICE servers and transport policy of every peer link.
    public let ice: ICEConfiguration
    /// The device this engine runs on, named to the channel at each join (`nil`: its user's only device).
    public let device: String?
    /// How often each link's quality is measured and reported (``RTCEngineEvent/remoteQuality(channel:uid:_:)``).
    public let qualityIntervalMillis: Int

    /// An engine meeting peers through `transport`. `label` names its queues (useful with several engines).
    /// Secondary channels capture from `secondarySources` (default: `sources`). `ice` gives the STUN and TURN
    /// servers used in every channel (the transport may add more at each join) and the ICE transport policy.
    /// `qualityIntervalMillis` is how often each link's quality is reported. `device` names the device it runs on (the rules of a push device id; use the id the app's signaling
    /// names, so that a user's devices can ring in one channel together); without it, a second device of the
    /// same user joining a channel replaces the first.
    public init(
        transport: any WebRTCChannelTransport, sources: WebRTCMediaSources = WebRTCMediaSources(),
        label: String = "webrtc", secondarySources: WebRTCMediaSources? = nil,
        ice: ICEConfiguration = ICEConfiguration(), device: String? = nil, qualityIntervalMillis: Int = 2_000
    ) {
        self.ice = ice
        self.device = device
        self.qualityIntervalMillis = max(100, qualityIntervalMillis)
        GStreamerRuntime.ensureInitialized()
        self.transport = transport
        self.sources = sources
        self.label = label
        self.secondarySources = secondarySources ?? sources
        queue = DispatchQueue(label: "callapi.\(label).engine")
        snapshotQueue = DispatchQueue(label: "callapi.\(label).snapshot")
    }

    deinit {
        let (session, pipeline) = state.withLock { state in
            defer {
                state.session = nil
                state.pipeline = nil
            }
            return (state.session, state.pipeline)
        }
        session?.membership?.leave()
        for peer in session?.peers.values.map({ $0 }) ?? [] {
            if let link = peer.link, let pipeline { link.remove(from: pipeline) }
        }
        pipeline?.tearDown()
    }

    /// GStreamer elements this engine needs that are not installed (empty when all are).
    public static var missingElements: [String] { GStreamerRuntime.missingElements() }

    // MARK: - CallRTCEngine

    @discardableResult
    public func addEventListener(_ listener: @escaping @Sendable (RTCEngineEvent) -> Void) -> RTCEventListenerToken {
        listeners.add(listener)
    }

    public func removeEventListener(_ token: RTCEventListenerToken) {
        listeners.remove(token)
    }

    public func joinChannel(_ channel: String, token: String, uid: UInt, media: RTCMediaOptions) {
        queue.async { [self] in join(channel, token: token, uid: uid, media: media) }
    }

    public func updateMedia(_ media: RTCMediaOptions) {
        queue.async { [self] in changeMedia(media) }
    }

    public func leaveChannel() {
        queue.async { [self] in leave() }
    }

    public func setRemotePlaybackVolume(_ volume: Int, uid: UInt) {
        state.withLock { state in
            state.volumes[uid] = min(100, max(0, volume))
            state.applyReceiving(to: uid)
        }
    }

    public func setLocalCanvas(_ view: (any CallCanvas)?) {
        state.withLock { $0.localCanvas = view }
    }

    public func setRemoteCanvas(_ view: (any CallCanvas)?, uid: UInt) {
        state.withLock { $0.remoteCanvases[uid] = view }
    }

    public func startPreview() {
        queue.async { [self] in
            let started = state.withLock { state -> Bool in
                defer { state.previewing = true }
                if !state.previewing { state.captureReported = false }
                return !state.previewing
            }
            guard started else { return }
            do throws(WebRTCEngineError) {
                try ensurePipeline()
            } catch {
                emit(.error(code: error.code.rawValue, message: error.message))
            }
        }
    }

    public func stopPreview() {
        queue.async { [self] in
            state.withLock { $0.previewing = false }
            stopPipelineIfIdle()
        }
    }

    public func renewToken(_ token: String) {
        queue.async { [self] in
            state.withLock { state in
                state.session?.token = token
                return state.session?.membership
            }?.renewToken(token)
        }
    }

    public func ntpWallTimeMillis() -> UInt64 {
        UInt64(max(0, Date().timeIntervalSince1970 * 1000))
    }

    // MARK: - On the queue

    /// Reports `event` to the listeners. Call on the queue.
    func emit(_ event: RTCEngineEvent) {
        listeners.emit(event)
    }

    private func join(_ channel: String, token: String, uid: UInt, media: RTCMediaOptions) {
        if secondaries.withLock({ $0[channel] != nil }) { return rejectJoin(channel) }
        if state.withLock({ $0.session != nil }) { leave() }
        let missing = GStreamerRuntime.missingElements()
        guard missing.isEmpty else {
            emit(
                .joinFailed(
                    channel: channel, code: WebRTCEngineError.Code.missingElements.rawValue,
                    message: "GStreamer elements missing: \(missing.joined(separator: ", "))"))
            return
        }
        state.withLock { $0.media = media }
        do throws(WebRTCEngineError) {
            try ensurePipeline()
        } catch {
            emit(.joinFailed(channel: channel, code: error.code.rawValue, message: error.message))
            return
        }
        let id = state.withLock { state in
            let id = state.makeId()
            state.session = ChannelSession(id: id, channel: channel, uid: uid, token: token)
            return id
        }
        connect(channel, token: token, uid: uid, session: id)
    }

    /// Joins `channel` through the transport for session `id` (its first join, or a rejoin).
    func connect(_ channel: String, token: String, uid: UInt, session id: Int) {
        let membership = transport.join(channel: channel, token: token, uid: uid, device: device) {
            [weak self] event in
            guard let self else { return }
            queue.async { self.handle(event, session: id) }
        }
        state.withLock { state in
            if state.session?.id == id { state.session?.membership = membership }
        }
    }

    private func leave() {
        let (session, pipeline) = state.withLock { state in
            defer { state.session = nil }
            return (state.session, state.pipeline)
        }
        guard let session else { return }
        session.membership?.leave()
        let links = session.peers.values.compactMap(\.link)
        if let pipeline = takePipelineIfIdle() {
            // Stopping the whole pipeline frees the peer bins with it, and GStreamer's own references to
            // them (retained messages) with them; removing them one by one first leaves those behind.
            for link in links { link.forget() }
            pipeline.tearDown()
        } else if let pipeline {
            for link in links { link.remove(from: pipeline) }
        }
        emit(.localLeft(channel: session.channel))
    }

    private func changeMedia(_ media: RTCMediaOptions) {
        let (old, members, membership) = state.withLock { state in
            defer { state.media = media }
            return (state.media, Array(state.session?.peers.keys ?? [:].keys), state.session?.membership)
        }
        // The valves first, then the announcement: a peer told "publishing" (or not) finds it already so.
        for member in members {
            applySending(to: member)
            state.withLock { $0.applyReceiving(to: member.uid) }
        }
        if old.publishMicrophone != media.publishMicrophone || old.publishCamera != media.publishCamera {
            for member in members {
                membership?.send(.publishing(audio: media.publishMicrophone, video: media.publishCamera), to: member)
            }
        }
        if old.subscribeAudio != media.subscribeAudio || old.subscribeVideo != media.subscribeVideo {
            for member in members {
                membership?.send(.subscription(audio: media.subscribeAudio, video: media.subscribeVideo), to: member)
            }
        }
    }

    /// Builds and starts the capture pipeline if there is none.
    func ensurePipeline() throws(WebRTCEngineError) {
        guard state.withLock({ $0.pipeline == nil }) else { return }
        let captured = BufferProbeBox { [weak self] pad, buffer in
            self?.captured(buffer, on: pad)
            return true
        }
        let bus = BusBox { [weak self] message in self?.busMessage(message) }
        let pipeline = try MediaPipeline.start(sources: sources, captured: captured, bus: bus)
        state.withLock { $0.pipeline = pipeline }
    }

    /// Tears the pipeline down when neither a channel nor the preview needs it.
    func stopPipelineIfIdle() {
        takePipelineIfIdle()?.tearDown()
    }

    /// The pipeline, taken out of the state, when neither a channel nor the preview needs it.
    private func takePipelineIfIdle() -> MediaPipeline? {
        state.withLock { state -> MediaPipeline? in
            guard state.session == nil, !state.previewing, let pipeline = state.pipeline else { return nil }
            state.pipeline = nil
            return pipeline
        }
    }

    // MARK: - From GStreamer threads

    private func captured(_ buffer: UnsafeMutablePointer<GstBuffer>, on pad: UnsafeMutablePointer<GstPad>) {
        let (report, canvas) = state.withLock { state -> (Bool, FrameSnapshotCanvas?) in
            var report = false
            if state.previewing && !state.captureReported {
                state.captureReported = true
                report = true
            }
            let canvas = (state.localCanvas as? FrameSnapshotCanvas).flatMap { $0.claimFrame() ? $0 : nil }
            return (report, canvas)
        }
        if report { queue.async { [self] in emit(.localFirstVideoFrameCaptured) } }
        if let canvas { snapshot(buffer, on: pad, into: canvas) }
    }

    /// Encodes `buffer` as PNG off the streaming thread and hands it to `canvas`.
    func snapshot(
        _ buffer: UnsafeMutablePointer<GstBuffer>, on pad: UnsafeMutablePointer<GstPad>,
        into canvas: FrameSnapshotCanvas
    ) {
        guard let frame = FrameRef(buffer: buffer, pad: pad) else {
            canvas.store(nil)
            return
        }
        snapshotQueue.async {
            let png = PNGCodec.encode(frame)
            frame.release()
            canvas.store(png)
        }
    }

    private func busMessage(_ message: UnsafeMutablePointer<GstMessage>) {
        guard cgst_message_type(message) == GST_MESSAGE_ERROR,
            let text = GStreamerRuntime.consume(cgst_message_error_text(message))
        else { return }
        queue.async { [self] in emit(.error(code: WebRTCEngineError.Code.pipeline.rawValue, message: text)) }
    }
}
