import CGStreamerShim
import CallAPI
import Foundation

// The channel side of the engine: transport events, peer links, and the offer/answer exchange.
// Everything here runs on the engine's queue unless it says otherwise.
extension WebRTCEngine {
    func handle(_ event: WebRTCChannelEvent, session id: Int) {
        guard let session = state.withLock({ $0.session }), session.id == id else { return }
        switch event {
        case .joined(let members, let iceServers):
            state.withLock { state in
                state.session?.joined = true
                state.session?.ice = PeerLink.ICE(ice, adding: iceServers)
            }
            emit(.localJoined(channel: session.channel, uid: session.uid))
            scheduleMediaWatch(session: id)
            for uid in members { addPeer(uid) }
        case .joinFailed(let code, let message):
            state.withLock { $0.session = nil }
            stopPipelineIfIdle()
            emit(.joinFailed(channel: session.channel, code: code, message: message))
        case .memberJoined(let uid):
            addPeer(uid)
        case .memberLeft(let uid, let reason):
            guard removePeer(uid) else { return }
            emit(.remoteLeft(channel: session.channel, uid: uid, reason: reason))
        case .signal(let uid, let signal):
            received(signal, from: uid)
        case .tokenWillExpire:
            emit(.tokenWillExpire(channel: session.channel))
        case .removed(let code, let message):
            state.withLock { $0.session?.membership = nil }
            for uid in session.peers.keys { _ = removePeer(uid) }
            emit(.error(code: code, message: message))
        }
    }

    private func addPeer(_ uid: UInt) {
        guard let (session, pipeline) = state.withLock({ state in state.session.map { ($0, state.pipeline) } }),
            uid != session.uid, session.peers[uid] == nil
        else { return }
        emit(.remoteJoined(channel: session.channel, uid: uid))
        guard let pipeline, let link = makeLink(to: uid, in: pipeline, ice: session.ice) else { return }
        let (actions, media) = state.withLock { state -> ([PeerNegotiation.Action], RTCMediaOptions) in
            var peer = PeerState(
                uid: uid, negotiation: PeerNegotiation(localUid: session.uid, remoteUid: uid),
                flow: .waiting(since: MediaArrivals.nowMillis))
            peer.link = link
            let actions = peer.negotiation.start()
            state.session?.peers[uid] = peer
            return (actions, state.media)
        }
        applySending(to: uid)
        if !media.subscribeAudio || !media.subscribeVideo {
            session.membership?.send(
                .subscription(audio: media.subscribeAudio, video: media.subscribeVideo), to: uid)
        }
        // A newcomer assumes the member publishes; it is told when the member publishes nothing (a paused
        // host, a viewer). Changes are told as they happen (`changeMedia`).
        if !media.publishMicrophone && !media.publishCamera {
            session.membership?.send(
                .publishing(audio: media.publishMicrophone, video: media.publishCamera), to: uid)
        }
        perform(actions, peer: uid)
    }

    /// A new peer link to `uid` in `pipeline`, its callbacks hopping onto the queue; `nil` (reported) when it
    /// cannot be built.
    func makeLink(to uid: UInt, in pipeline: MediaPipeline, ice: PeerLink.ICE) -> PeerLink? {
        let linkId = state.withLock { $0.makeId() }
        let callbacks = PeerLink.Callbacks(
            iceCandidate: { [weak self] mline, candidate in
                guard let self else { return }
                queue.async { self.localCandidate(mline, candidate, to: uid, link: linkId) }
            },
            padAdded: { [weak self] pad in self?.remotePad(pad, from: uid, link: linkId) },
            firstPacketSent: { [weak self] kind in
                guard let self else { return }
                queue.async { self.firstPacketSent(kind, link: linkId) }
            })
        do throws(WebRTCEngineError) {
            return try PeerLink.add(id: linkId, to: pipeline, ice: ice, callbacks: callbacks)
        } catch {
            emit(.error(code: error.code.rawValue, message: error.message))
            return nil
        }
    }

    /// Removes the link with `uid`; whether there was one.
    func removePeer(_ uid: UInt) -> Bool {
        let (peer, pipeline) = state.withLock { state in
            (state.session?.peers.removeValue(forKey: uid), state.pipeline)
        }
        guard let peer else { return false }
        if let link = peer.link, let pipeline { link.remove(from: pipeline) }
        return true
    }

    private func received(_ signal: WebRTCSignal, from uid: UInt) {
        switch signal {
        case .subscription(let audio, let video):
            state.withLock { $0.session?.peers[uid]?.peerSubscribes = (audio, video) }
            applySending(to: uid)
            return
        case .publishing(let audio, let video):
            guard
                let channel = state.withLock({ state -> String? in
                    guard state.session?.peers[uid] != nil else { return nil }
                    state.session?.peers[uid]?.peerPublishes = (audio, video)
                    return state.session?.channel
                })
            else { return }
            emit(.remotePublishingChanged(channel: channel, uid: uid, audio: audio, video: video))
            return
        case .restart(let generation):
            peerRestarted(uid, generation: generation)
            return
        case .offer, .answer, .iceCandidate:
            break
        }
        let actions = state.withLock { $0.session?.peers[uid]?.negotiation.received(signal) } ?? []
        perform(actions, peer: uid)
    }

    private func localCandidate(_ mline: UInt32, _ candidate: String, to uid: UInt, link: Int) {
        guard let session = state.withLock({ $0.session }), session.peers[uid]?.link?.id == link else { return }
        session.membership?.send(.iceCandidate(mline: mline, candidate: candidate), to: uid)
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

    /// Opens or closes the send valves of `uid` as the media options and the peer's subscription say.
    func applySending(to uid: UInt) {
        let keyFrameLink = state.withLock { state -> PeerLink? in
            guard let peer = state.session?.peers[uid], let link = peer.link else { return nil }
            let sends = state.sends(to: peer)
            link.videoValve.set("drop", !sends.video)
            link.audioValve.set("drop", !sends.audio)
            state.session?.peers[uid]?.sendingVideo = sends.video
            return sends.video && !peer.sendingVideo ? link : nil
        }
        keyFrameLink?.requestKeyFrame()
    }

    // MARK: - Negotiation

    func perform(_ actions: [PeerNegotiation.Action], peer uid: UInt) {
        guard !actions.isEmpty,
            let (link, membership) = state.withLock({ state in
                state.session?.peers[uid]?.link.map { ($0, state.session?.membership) }
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
                        queue.async { self.localDescriptionCreated(sdp, failure: failure, peer: uid, link: link.id) }
                    })
                if action == .createOffer {
                    cgst_webrtc_create_offer(link.webrtc.pointer, promise)
                } else {
                    cgst_webrtc_create_answer(link.webrtc.pointer, promise)
                }
                gst_promise_unref(promise)
            case .applyLocal(let type, let sdp):
                guard let description = cgst_description_from_text(type.gstType, sdp) else {
                    negotiationFailed("local \(type) does not parse", peer: uid)
                    return
                }
                cgst_webrtc_set_local_description(link.webrtc.pointer, description, nil)
                gst_webrtc_session_description_free(description)
            case .applyRemote(let type, let sdp):
                guard let description = cgst_description_from_text(type.gstType, sdp) else {
                    negotiationFailed("remote \(type) does not parse", peer: uid)
                    return
                }
                let promise = GstCallbacks.promise(
                    PromiseBox { [weak self] promise in
                        var error: UnsafeMutablePointer<CChar>?
                        let failed = cgst_promise_failed(promise, &error) != 0
                        let failure = GStreamerRuntime.consume(error) ?? (failed ? "failed" : nil)
                        guard let self else { return }
                        queue.async { self.remoteDescriptionApplied(failure: failure, peer: uid, link: link.id) }
                    })
                cgst_webrtc_set_remote_description(link.webrtc.pointer, description, promise)
                gst_promise_unref(promise)
                gst_webrtc_session_description_free(description)
            case .addRemoteCandidate(let mline, let candidate):
                cgst_webrtc_add_ice_candidate(link.webrtc.pointer, mline, candidate)
            case .send(let signal):
                membership?.send(signal, to: uid)
            case .fail(let reason):
                emit(
                    .error(
                        code: WebRTCEngineError.Code.negotiation.rawValue,
                        message: "negotiation with \(uid) failed: \(reason)"))
            }
        }
    }

    private func localDescriptionCreated(_ sdp: String?, failure: String?, peer uid: UInt, link: Int) {
        let actions = state.withLock { state -> [PeerNegotiation.Action] in
            guard state.session?.peers[uid]?.link?.id == link else { return [] }
            if let sdp { return state.session?.peers[uid]?.negotiation.localDescriptionCreated(sdp) ?? [] }
            return state.session?.peers[uid]?.negotiation.failed(failure ?? "no description") ?? []
        }
        perform(actions, peer: uid)
        applySending(to: uid)
    }

    private func remoteDescriptionApplied(failure: String?, peer uid: UInt, link: Int) {
        let actions = state.withLock { state -> [PeerNegotiation.Action] in
            guard state.session?.peers[uid]?.link?.id == link else { return [] }
            if let failure { return state.session?.peers[uid]?.negotiation.failed(failure) ?? [] }
            return state.session?.peers[uid]?.negotiation.remoteDescriptionApplied() ?? []
        }
        perform(actions, peer: uid)
        applySending(to: uid)
    }

    private func negotiationFailed(_ reason: String, peer uid: UInt) {
        let actions = state.withLock { $0.session?.peers[uid]?.negotiation.failed(reason) } ?? []
        perform(actions, peer: uid)
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
