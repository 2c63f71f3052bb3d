import CallAPI
import Dispatch

// The media watch and link restarts: when a peer's media stops while it publishes (the network path broke), the
// engine reports `remoteMediaInterrupted`, tells the peer `restart`, and both build a fresh peer link, which gathers
// candidates again (a new address, the TURN relay) and negotiates anew. webrtcbin 1.22 has no in-place ICE restart
// (no `ice-restart` offer option), so a restart costs one more DTLS handshake than a browser's. Runs on the queue.
extension WebRTCEngine {
    /// How often the watch looks at every peer's media.
    static let mediaWatchMillis = 250

    /// Looks at the media of every peer of the membership `id` now and then, while it lasts.
    func scheduleMediaWatch(session id: Int) {
        queue.asyncAfter(deadline: .now() + .milliseconds(Self.mediaWatchMillis)) { [weak self] in
            guard let self, state.withLock({ $0.session?.id == id }) else { return }
            watchMedia()
            scheduleMediaWatch(session: id)
        }
    }

    private func watchMedia() {
        let now = MediaArrivals.nowMillis
        let decisions = state.withLock { state -> [(UInt, MediaFlow.Decision, Int)] in
            guard let session = state.session else { return [] }
            let media = state.media
            return session.peers.values.map { peer in
                let publishes =
                    (peer.peerPublishes.audio && media.subscribeAudio)
                    || (peer.peerPublishes.video && media.subscribeVideo)
                var flow = peer.flow
                let decision = flow.watch(
                    publishes: publishes, negotiated: peer.negotiation.isComplete,
                    lastArrival: peer.link?.arrivals.last, now: now)
                state.session?.peers[peer.uid]?.flow = flow
                return (peer.uid, decision, peer.generation)
            }
        }
        guard let channel = state.withLock({ $0.session?.channel }) else { return }
        for (uid, decision, generation) in decisions {
            switch decision {
            case .nothing:
                break
            case .interrupted:
                emit(.remoteMediaInterrupted(channel: channel, uid: uid))
                restartLink(to: uid, generation: generation + 1, tellPeer: true)
            case .restart:
                restartLink(to: uid, generation: generation + 1, tellPeer: true)
            case .resumed(let gapMillis):
                emit(.remoteMediaResumed(channel: channel, uid: uid, gapMillis: gapMillis))
            }
        }
    }

    /// The peer restarted its link to this member as `generation`: follow, unless this side already did.
    func peerRestarted(_ uid: UInt, generation: Int) {
        let now = MediaArrivals.nowMillis
        let report = state.withLock { state -> (String, Bool)? in
            guard let channel = state.session?.channel, var peer = state.session?.peers[uid],
                generation > peer.generation
            else { return nil }
            let report = peer.flow.peerRestarted(lastArrival: peer.link?.arrivals.last, now: now)
            state.session?.peers[uid]?.flow = peer.flow
            return (channel, report)
        }
        guard let (channel, interrupted) = report else { return }
        if interrupted { emit(.remoteMediaInterrupted(channel: channel, uid: uid)) }
        restartLink(to: uid, generation: generation, tellPeer: false)
    }

    /// Replaces the link to `uid` with a fresh one numbered `generation` and negotiates it; with `tellPeer`, first
    /// tells the peer (so that its new offer or answer follows the restart on the same ordered relay).
    private func restartLink(to uid: UInt, generation: Int, tellPeer: Bool) {
        guard
            let (session, pipeline, old) = state.withLock({ state in
                state.session.flatMap { session in
                    state.pipeline.map { (session, $0, session.peers[uid]?.link) }
                }
            })
        else { return }
        if let old { old.remove(from: pipeline) }
        guard let link = makeLink(to: uid, in: pipeline, ice: session.ice) else { return }
        let actions = state.withLock { state -> [PeerNegotiation.Action] in
            guard var peer = state.session?.peers[uid] else { return [] }
            peer.link = link
            peer.generation = generation
            peer.negotiation = PeerNegotiation(localUid: session.uid, remoteUid: uid)
            peer.sendingVideo = false
            peer.receiveVideo = nil
            peer.receiveAudio = nil
            let actions = peer.negotiation.start()
            state.session?.peers[uid] = peer
            return actions
        }
        if tellPeer { session.membership?.send(.restart(generation: generation), to: uid) }
        applySending(to: uid)
        perform(actions, peer: uid)
    }
}
