import CallAPI
import CallAPISignalProtocol
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
        let decisions = state.withLock { state -> [(ChannelMember, MediaFlow.Decision, Int)] in
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
                state.session?.peers[peer.member]?.flow = flow
                return (peer.member, decision, peer.generation)
            }
        }
        guard let channel = state.withLock({ $0.session?.channel }) else { return }
        for (member, decision, generation) in decisions {
            switch decision {
            case .nothing:
                break
            case .interrupted:
                emit(.remoteMediaInterrupted(channel: channel, uid: member.uid))
                restartLink(to: member, generation: generation + 1, tellPeer: true)
            case .restart:
                restartLink(to: member, generation: generation + 1, tellPeer: true)
            case .resumed(let gapMillis):
                emit(.remoteMediaResumed(channel: channel, uid: member.uid, gapMillis: gapMillis))
            }
        }
    }

    /// The peer restarted its link to this member as `generation`: follow, unless this side already did.
    func peerRestarted(_ member: ChannelMember, generation: Int) {
        let now = MediaArrivals.nowMillis
        let report = state.withLock { state -> (String, Bool)? in
            guard let channel = state.session?.channel, var peer = state.session?.peers[member],
                generation > peer.generation
            else { return nil }
            let report = peer.flow.peerRestarted(lastArrival: peer.link?.arrivals.last, now: now)
            state.session?.peers[member]?.flow = peer.flow
            return (channel, report)
        }
        guard let (channel, interrupted) = report else { return }
        if interrupted { emit(.remoteMediaInterrupted(channel: channel, uid: member.uid)) }
        restartLink(to: member, generation: generation, tellPeer: false)
    }

    /// Replaces the link to `member` with a fresh one numbered `generation` and negotiates it; with `tellPeer`,
    /// first tells the peer (so that its new offer or answer follows the restart on the same ordered relay).
    private func restartLink(to member: ChannelMember, generation: Int, tellPeer: Bool) {
        guard
            let (session, pipeline, old) = state.withLock({ state in
                state.session.flatMap { session in
                    state.pipeline.map { (session, $0, session.peers[member]?.link) }
                }
            })
        else { return }
        if let old { old.remove(from: pipeline) }
        guard let link = makeLink(to: member, in: pipeline, ice: session.ice) else { return }
        let actions = state.withLock { state -> [PeerNegotiation.Action] in
            guard var peer = state.session?.peers[member] else { return [] }
            peer.link = link
            peer.generation = generation
            peer.negotiation = PeerNegotiation(localUid: session.uid, remoteUid: member.uid)
            peer.sendingVideo = false
            peer.receiveVideo = nil
            peer.receiveAudio = nil
            peer.quality = QualityMeter()
            let actions = peer.negotiation.handle(.start)
            state.session?.peers[member] = peer
            return actions
        }
        if tellPeer { session.membership?.send(.restart(generation: generation), to: member) }
        applySending(to: member)
        perform(actions, peer: member)
    }
}
