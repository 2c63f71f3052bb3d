import CGStreamerShim
import CallAPI
import CallAPISignalProtocol
import Foundation

// The channel side of the engine: transport events, peer links, and the offer/answer exchange.
// Everything here runs on the engine's queue unless it says otherwise.
//
// A peer is a member (a uid on a device): a user ringing on a phone and a tablet is two links here. What the engine
// reports stays per uid, as the seam speaks of users: `remoteJoined` when the uid's first device arrives,
// `remoteLeft` when its last one goes, one first frame of each kind per uid.
extension WebRTCEngine {
    func handle(_ event: WebRTCChannelEvent, session id: Int) {
        guard let session = state.withLock({ $0.session }), session.id == id else { return }
        switch event {
        case .joined(let members, let iceServers):
            if session.outage != nil {
                // Back after a lost connection: the links that stayed up go on; members new since get theirs.
                state.withLock { $0.session?.outage = nil }
                for member in members { addPeer(member) }
                return
            }
            state.withLock { state in
                state.session?.joined = true
                state.session?.ice = PeerLink.ICE(ice, adding: iceServers)
            }
            emit(.localJoined(channel: session.channel, uid: session.uid))
            scheduleMediaWatch(session: id)
            scheduleQualityWatch(session: id)
            for member in members { addPeer(member) }
        case .joinFailed(let code, let message) where session.outage != nil:
            if Self.rejoinable(code) { return scheduleRejoin(session: id) }
            lost(session, code: code, message: message)
        case .joinFailed(let code, let message):
            state.withLock { $0.session = nil }
            stopPipelineIfIdle()
            emit(.joinFailed(channel: session.channel, code: code, message: message))
        case .memberJoined(let member):
            addPeer(member)
        case .memberLeft(let member, let reason):
            guard removePeer(member) else { return }
            if state.withLock({ $0.session?.peers(of: member.uid).isEmpty ?? true }) {
                emit(.remoteLeft(channel: session.channel, uid: member.uid, reason: reason))
            }
        case .signal(let member, let signal):
            received(signal, from: member)
        case .tokenWillExpire:
            emit(.tokenWillExpire(channel: session.channel))
        case .removed(let code, _) where session.joined && Self.rejoinable(code):
            // The channel's server went away (killed, or stopping for an upgrade): media flows peer to peer, so the
            // links stay while the engine joins again, through the transport's next server if it has several.
            state.withLock { state in
                state.session?.membership = nil
                state.session?.outage = (ContinuousClock.now, 0)
            }
            scheduleRejoin(session: id)
        case .removed(let code, let message):
            lost(session, code: code, message: message)
        }
    }

    /// How long the engine tries to join its channel again after its connection was lost, before it gives up.
    static let rejoinLimit: Duration = .seconds(20)

    /// Whether a channel's connection that ended with `code` may be joined again: lost, the server stopping, or a
    /// cluster's node that sends the join elsewhere (its holder may be a node not yet found dead).
    static func rejoinable(_ code: Int) -> Bool {
        [ChannelErrorCode.connectionLost, .serverShutdown, .channelElsewhere].map(\.rawValue).contains(code)
    }

    /// Joins session `id`'s channel again after a pause that doubles from 250 ms to 2 s, until ``rejoinLimit``.
    func scheduleRejoin(session id: Int) {
        guard let attempts = state.withLock({ $0.session?.id == id ? $0.session?.outage?.attempts : nil }) else {
            return
        }
        let pause = min(2_000, 250 << min(attempts, 3))
        queue.asyncAfter(deadline: .now() + .milliseconds(pause)) { [weak self] in
            guard let self,
                let session = state.withLock({ state -> ChannelSession? in
                    guard state.session?.id == id, let outage = state.session?.outage else { return nil }
                    state.session?.outage = (outage.since, outage.attempts + 1)
                    return state.session
                }),
                let outage = session.outage
            else { return }
            guard ContinuousClock.now - outage.since < Self.rejoinLimit else {
                return lost(
                    session, code: ChannelErrorCode.connectionLost.rawValue,
                    message: "channel \(session.channel) could not be joined again within \(Self.rejoinLimit)")
            }
            connect(session.channel, token: session.token, uid: session.uid, session: id)
        }
    }

    /// The channel is gone for good: its links end, and CallAPI hears the error.
    private func lost(_ session: ChannelSession, code: Int, message: String) {
        state.withLock { state in
            state.session?.membership = nil
            state.session?.outage = nil
        }
        for member in session.peers.keys { _ = removePeer(member) }
        emit(.error(code: code, message: message))
    }

    /// Links to `member`, unless it is this engine's own user (on another device) or already linked.
    private func addPeer(_ member: ChannelMember) {
        guard let (session, pipeline) = state.withLock({ state in state.session.map { ($0, state.pipeline) } }),
            member.uid != session.uid, session.peers[member] == nil
        else { return }
        if !session.peers.keys.contains(where: { $0.uid == member.uid }) {
            emit(.remoteJoined(channel: session.channel, uid: member.uid))
        }
        guard let pipeline, let link = makeLink(to: member, in: pipeline, ice: session.ice) else { return }
        let (actions, media) = state.withLock { state -> ([PeerNegotiation.Action], RTCMediaOptions) in
            var peer = PeerState(
                member: member, negotiation: PeerNegotiation(localUid: session.uid, remoteUid: member.uid),
                flow: .waiting(since: MediaArrivals.nowMillis))
            peer.link = link
            let actions = peer.negotiation.handle(.start)
            state.session?.peers[member] = peer
            return (actions, state.media)
        }
        applySending(to: member)
        if !media.subscribeAudio || !media.subscribeVideo {
            session.membership?.send(
                .subscription(audio: media.subscribeAudio, video: media.subscribeVideo), to: member)
        }
        // A newcomer assumes the member publishes; it is told when the member publishes nothing (a paused
        // host, a viewer). Changes are told as they happen (`changeMedia`).
        if !media.publishMicrophone && !media.publishCamera {
            session.membership?.send(
                .publishing(audio: media.publishMicrophone, video: media.publishCamera), to: member)
        }
        perform(actions, peer: member)
    }

    /// A new peer link to `member` in `pipeline`, its callbacks hopping onto the queue; `nil` (reported) when it
    /// cannot be built.
    func makeLink(
        to member: ChannelMember, in pipeline: MediaPipeline, ice: PeerLink.ICE, payloadTypes: RTPPayloadTypes = .ours
    ) -> PeerLink? {
        let linkId = state.withLock { $0.makeId() }
        let callbacks = PeerLink.Callbacks(
            iceCandidate: { [weak self] mline, candidate in
                guard let self else { return }
                queue.async { self.localCandidate(mline, candidate, to: member, link: linkId) }
            },
            padAdded: { [weak self] pad in self?.remotePad(pad, from: member, link: linkId) },
            firstPacketSent: { [weak self] kind in
                guard let self else { return }
                queue.async { self.firstPacketSent(kind, link: linkId) }
            })
        do throws(WebRTCEngineError) {
            return try PeerLink.add(
                id: linkId, to: pipeline, ice: ice, payloadTypes: payloadTypes, callbacks: callbacks)
        } catch {
            emit(.error(code: error.code.rawValue, message: error.message))
            return nil
        }
    }

    /// Removes the link with `member`; whether there was one. The uid's first frames are forgotten with its last
    /// device.
    func removePeer(_ member: ChannelMember) -> Bool {
        let (peer, pipeline) = state.withLock { state in
            let peer = state.session?.peers.removeValue(forKey: member)
            if peer != nil, state.session?.peers(of: member.uid).isEmpty == true {
                state.session?.videoDecoded.remove(member.uid)
                state.session?.audioDecoded.remove(member.uid)
            }
            return (peer, state.pipeline)
        }
        guard let peer else { return false }
        if let link = peer.link, let pipeline { link.remove(from: pipeline) }
        return true
    }

    private func received(_ signal: WebRTCSignal, from member: ChannelMember) {
        switch signal {
        case .subscription(let audio, let video):
            state.withLock { $0.session?.peers[member]?.peerSubscribes = (audio, video) }
            applySending(to: member)
            return
        case .publishing(let audio, let video):
            guard
                let channel = state.withLock({ state -> String? in
                    guard state.session?.peers[member] != nil else { return nil }
                    state.session?.peers[member]?.peerPublishes = (audio, video)
                    return state.session?.channel
                })
            else { return }
            emit(.remotePublishingChanged(channel: channel, uid: member.uid, audio: audio, video: video))
            return
        case .restart(let generation):
            peerRestarted(member, generation: generation)
            return
        case .offer(let sdp):
            sendWithOfferedPayloadTypes(sdp, to: member)
        case .answer, .iceCandidate:
            break
        }
        let actions = state.withLock { $0.session?.peers[member]?.negotiation.handle(.received(signal)) } ?? []
        perform(actions, peer: member)
    }

    /// Before an answerer applies an offer: when the offer numbers VP8 or Opus otherwise than the link sends them,
    /// the link (nothing negotiated or gathered on it yet) is replaced by one that sends with the offer's numbers
    /// (``RTPPayloadTypes``).
    private func sendWithOfferedPayloadTypes(_ sdp: String, to member: ChannelMember) {
        let offered = RTPPayloadTypes.offered(in: sdp)
        guard
            let (session, pipeline, old) = state.withLock({ state -> (ChannelSession, MediaPipeline, PeerLink)? in
                guard let session = state.session, let pipeline = state.pipeline, let peer = session.peers[member],
                    let link = peer.link, peer.negotiation.awaitsOffer, link.payloadTypes != offered
                else { return nil }
                return (session, pipeline, link)
            })
        else { return }
        old.remove(from: pipeline)
        let link = makeLink(to: member, in: pipeline, ice: session.ice, payloadTypes: offered)
        state.withLock { state in
            state.session?.peers[member]?.link = link
            state.session?.peers[member]?.sendingVideo = false
        }
        applySending(to: member)
    }

    private func localCandidate(_ mline: UInt32, _ candidate: String, to member: ChannelMember, link: Int) {
        guard let session = state.withLock({ $0.session }), session.peers[member]?.link?.id == link else { return }
        session.membership?.send(.iceCandidate(mline: mline, candidate: candidate), to: member)
    }

    private func firstPacketSent(_ kind: PeerLink.Kind, link: Int) {
        let channel = state.withLock { state -> String? in
            guard let session = state.session, session.peers.values.contains(where: { $0.link?.id == link })
            else { return nil }
            switch kind {
            case .video where !session.publishedVideo:
                state.session?.publishedVideo = true
            case .audio where !session.publishedAudio:
                state.session?.publishedAudio = true
            default:
                return nil
            }
            return session.channel
        }
        guard let channel else { return }
        emit(
            kind == .video
                ? .localFirstVideoFramePublished(channel: channel) : .localFirstAudioFramePublished(channel: channel))
    }

    /// Opens or closes the send valves of `member` as the media options and the peer's subscription say.
    func applySending(to member: ChannelMember) {
        let keyFrameLink = state.withLock { state -> PeerLink? in
            guard let peer = state.session?.peers[member], let link = peer.link else { return nil }
            let sends = state.sends(to: peer)
            link.videoValve.set("drop", !sends.video)
            link.audioValve.set("drop", !sends.audio)
            state.session?.peers[member]?.sendingVideo = sends.video
            return sends.video && !peer.sendingVideo ? link : nil
        }
        keyFrameLink?.requestKeyFrame()
    }

    // MARK: - Negotiation

    func perform(_ actions: [PeerNegotiation.Action], peer member: ChannelMember) {
        guard !actions.isEmpty,
            let (link, membership) = state.withLock({ state in
                state.session?.peers[member]?.link.map { ($0, state.session?.membership) }
            })
        else { return }
        for action in actions {
            switch action {
            case .createOffer, .createAnswer:
                let field = action == .createOffer ? "offer" : "answer"
                let promise = GstCallbacks.promise(
                    PromiseBox { [weak self] promise in
                        var error: UnsafeMutablePointer<CChar>?
                        let description = cgst_promise_take_description(promise, field, &error)
                        let sdp = description.flatMap { GStreamerRuntime.consume(cgst_description_to_text($0)) }
                        if let description { gst_webrtc_session_description_free(description) }
                        let failure = GStreamerRuntime.consume(error)
                        guard let self else { return }
                        queue.async {
                            self.localDescriptionCreated(sdp, failure: failure, peer: member, link: link.id)
                        }
                    })
                if action == .createOffer {
                    cgst_webrtc_create_offer(link.webrtc.pointer, promise)
                } else {
                    cgst_webrtc_create_answer(link.webrtc.pointer, promise)
                }
                gst_promise_unref(promise)
            case .applyLocal(let type, let sdp):
                guard let description = cgst_description_from_text(type.gstType, sdp) else {
                    negotiationFailed("local \(type) does not parse", peer: member)
                    return
                }
                cgst_webrtc_set_local_description(link.webrtc.pointer, description, nil)
                gst_webrtc_session_description_free(description)
            case .applyRemote(let type, let sdp):
                guard let description = cgst_description_from_text(type.gstType, sdp) else {
                    negotiationFailed("remote \(type) does not parse", peer: member)
                    return
                }
                let promise = GstCallbacks.promise(
                    PromiseBox { [weak self] promise in
                        var error: UnsafeMutablePointer<CChar>?
                        let failed = cgst_promise_failed(promise, &error) != 0
                        let failure = GStreamerRuntime.consume(error) ?? (failed ? "failed" : nil)
                        guard let self else { return }
                        queue.async { self.remoteDescriptionApplied(failure: failure, peer: member, link: link.id) }
                    })
                cgst_webrtc_set_remote_description(link.webrtc.pointer, description, promise)
                gst_promise_unref(promise)
                gst_webrtc_session_description_free(description)
            case .addRemoteCandidate(let mline, let candidate):
                cgst_webrtc_add_ice_candidate(link.webrtc.pointer, mline, candidate)
            case .send(let signal):
                membership?.send(signal, to: member)
            case .fail(let reason):
                emit(
                    .error(
                        code: WebRTCEngineError.Code.negotiation.rawValue,
                        message: "negotiation with \(member) failed: \(reason)"))
            }
        }
    }

    private func localDescriptionCreated(_ sdp: String?, failure: String?, peer member: ChannelMember, link: Int) {
        let actions = state.withLock { state -> [PeerNegotiation.Action] in
            guard state.session?.peers[member]?.link?.id == link else { return [] }
            if let sdp { return state.session?.peers[member]?.negotiation.handle(.localDescriptionCreated(sdp)) ?? [] }
            return state.session?.peers[member]?.negotiation.handle(.failed(failure ?? "no description")) ?? []
        }
        perform(actions, peer: member)
        applySending(to: member)
    }

    private func remoteDescriptionApplied(failure: String?, peer member: ChannelMember, link: Int) {
        let actions = state.withLock { state -> [PeerNegotiation.Action] in
            guard state.session?.peers[member]?.link?.id == link else { return [] }
            if let failure { return state.session?.peers[member]?.negotiation.handle(.failed(failure)) ?? [] }
            return state.session?.peers[member]?.negotiation.handle(.remoteDescriptionApplied) ?? []
        }
        perform(actions, peer: member)
        applySending(to: member)
    }

    private func negotiationFailed(_ reason: String, peer member: ChannelMember) {
        let actions = state.withLock { $0.session?.peers[member]?.negotiation.handle(.failed(reason)) } ?? []
        perform(actions, peer: member)
    }
}

extension PeerNegotiation.SDPType {
    var gstType: GstWebRTCSDPType {
        switch self {
        case .offer: GST_WEBRTC_SDP_TYPE_OFFER
        case .answer: GST_WEBRTC_SDP_TYPE_ANSWER
        }
    }
}
