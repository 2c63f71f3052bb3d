import CGStreamerShim
import CallAPI
import CallAPISignalProtocol

// The receiving side: receive bins for the peer's streams and their first decoded frames. These run on
// GStreamer streaming threads; they touch only the locked state and hop onto the queue to report.
extension WebRTCEngine {
    /// A new webrtcbin source pad for `member`: build and link its receive bin now, on this thread.
    func remotePad(_ pad: UnsafeMutablePointer<GstPad>, from member: ChannelMember, link linkId: Int) {
        guard let link = state.withLock({ $0.session?.peers[member]?.link }), link.id == linkId,
            let kind = PeerLink.kind(of: pad)
        else { return }
        let arrivals = link.arrivals
        let decoded = BufferProbeBox { [weak self] pad, buffer in
            arrivals.record(kind)
            return self?.decoded(kind, buffer, on: pad, from: member, link: linkId) ?? false
        }
        guard let receive = link.attachReceiveBin(for: pad, sources: sources, decoded: decoded) else { return }
        state.withLock { state in
            guard state.session?.peers[member]?.link?.id == linkId else { return }
            switch kind {
            case .video: state.session?.peers[member]?.receiveVideo = receive
            case .audio: state.session?.peers[member]?.receiveAudio = receive
            }
            state.applyReceiving(to: member.uid)
        }
    }

    /// A decoded buffer of `kind` from `member`; returns whether to keep probing. The first of each kind is
    /// reported once per uid, from whichever of its devices it comes.
    private func decoded(
        _ kind: PeerLink.Kind, _ buffer: UnsafeMutablePointer<GstBuffer>, on pad: UnsafeMutablePointer<GstPad>,
        from member: ChannelMember, link linkId: Int
    ) -> Bool {
        let uid = member.uid
        let (channel, canvas) = state.withLock { state -> (String?, FrameSnapshotCanvas?) in
            guard let session = state.session, let peer = session.peers[member], peer.link?.id == linkId else {
                return (nil, nil)
            }
            var report = false
            switch kind {
            case .video: report = state.session?.videoDecoded.insert(uid).inserted ?? false
            case .audio: report = state.session?.audioDecoded.insert(uid).inserted ?? false
            }
            let canvas =
                kind == .video
                ? (state.remoteCanvases[uid] as? FrameSnapshotCanvas).flatMap { $0.claimFrame() ? $0 : nil } : nil
            return (report ? session.channel : nil, canvas)
        }
        if let canvas { snapshot(buffer, on: pad, into: canvas) }
        if let channel {
            queue.async { [self] in
                guard state.withLock({ $0.session?.peers[member]?.link?.id == linkId }) else { return }
                emit(
                    kind == .video
                        ? .remoteFirstVideoFrameDecoded(channel: channel, uid: uid)
                        : .remoteFirstAudioFrameDecoded(channel: channel, uid: uid))
            }
        }
        // Kept for the media watch (every buffer records its arrival) and for snapshot canvases set later.
        return true
    }
}

extension EngineState {
    /// Opens or closes the receive valves of `uid`'s devices and sets their playback volume. Property sets only,
    /// so safe under the lock.
    func applyReceiving(to uid: UInt) {
        for peer in session?.peers.values ?? [:].values where peer.uid == uid {
            peer.receiveVideo?.valve.set("drop", !media.subscribeVideo)
            peer.receiveAudio?.valve.set("drop", !media.subscribeAudio)
            if let volume = peer.receiveAudio?.volume {
                let level = volumes[uid] ?? 100
                volume.set("volume", Double(level) / 100)
                volume.set("mute", level == 0)
            }
        }
    }
}
