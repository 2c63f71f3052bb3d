import CGStreamerShim
import CallAPI
import CallAPISignalProtocol
import Dispatch

// The quality meter: every `qualityIntervalMillis`, each negotiated link's statistics (webrtcbin's `get-stats`) and
// its longest gaps between decoded frames become an `RTCQuality` for the link's user (`remoteQuality`). Runs on the
// queue; the statistics' promise is replied on a GStreamer thread, which only reads them and hops back.
extension WebRTCEngine {
    /// Measures every link's quality now and then, while the membership `id` lasts.
    func scheduleQualityWatch(session id: Int) {
        queue.asyncAfter(deadline: .now() + .milliseconds(qualityIntervalMillis)) { [weak self] in
            guard let self, state.withLock({ $0.session?.id == id }) else { return }
            measureQuality()
            scheduleQualityWatch(session: id)
        }
    }

    private func measureQuality() {
        let links = state.withLock { state in
            state.session?.peers.values.compactMap { peer in
                peer.negotiation.isComplete ? peer.link.map { (peer.member, $0) } : nil
            } ?? []
        }
        for (member, link) in links {
            let linkId = link.id
            let promise = GstCallbacks.promise(
                PromiseBox { [weak self] promise in
                    var stats = cgst_link_stats()
                    guard cgst_promise_read_stats(promise, &stats) != 0, let self else { return }
                    let counters = LinkCounters(stats)
                    queue.async { self.qualityRead(counters, from: member, link: linkId) }
                })
            cgst_webrtc_get_stats(link.webrtc.pointer, promise)
            gst_promise_unref(promise)
        }
    }

    private func qualityRead(_ counters: LinkCounters, from member: ChannelMember, link: Int) {
        let now = MediaArrivals.nowMillis
        let reading = state.withLock { state -> (String, RTCQuality)? in
            guard let channel = state.session?.channel, var peer = state.session?.peers[member],
                let current = peer.link, current.id == link
            else { return nil }
            let quality = peer.quality.reading(counters, at: now, gaps: current.arrivals.takeLongestGaps(now: now))
            state.session?.peers[member]?.quality = peer.quality
            return quality.map { (channel, $0) }
        }
        guard let (channel, quality) = reading else { return }
        emit(.remoteQuality(channel: channel, uid: member.uid, quality))
    }
}

extension LinkCounters {
    init(_ stats: cgst_link_stats) {
        func inbound(_ kind: Int) -> Inbound? {
            guard (kind == 0 ? stats.has_inbound.0 : stats.has_inbound.1) != 0 else { return nil }
            func value(_ tuple: (Double, Double)) -> Double { kind == 0 ? tuple.0 : tuple.1 }
            return Inbound(
                packetsReceived: value(stats.packets_received), packetsLost: value(stats.packets_lost),
                bytesReceived: value(stats.bytes_received), jitterSeconds: value(stats.jitter_seconds))
        }
        self.init(
            audio: inbound(0), video: inbound(1),
            roundTripSeconds: stats.has_round_trip != 0 ? stats.round_trip_seconds : nil)
    }
}
