import CGStreamerShim
import CallAPISignalProtocol

/// The part of the pipeline for one remote member: a `webrtcbin` fed from the capture tees through valves
/// and encoders (VP8, Opus), and receive bins added when the peer's streams arrive. Lives in a bin of its
/// own inside the pipeline, so it is added and removed as one.
struct PeerLink: Sendable {
    /// Tells callbacks of a removed link from those of the current one.
    let id: Int
    /// The payload types it sends with.
    let payloadTypes: RTPPayloadTypes
    /// The peer's bin (owned reference).
    let bin: ElementRef
    /// Borrowed from ``bin``.
    let webrtc: ElementRef
    let videoValve: ElementRef
    let audioValve: ElementRef
    let videoEncoder: ElementRef
    /// Tee request pads feeding the bin (owned references).
    let videoTeePad: PadRef
    let audioTeePad: PadRef
    /// When media from the peer was last decoded on this link.
    let arrivals = MediaArrivals()

    /// The streams' kinds, for probes and receive bins.
    enum Kind: String, Sendable {
        case audio, video
    }

    /// What the link reports from GStreamer threads.
    struct Callbacks: Sendable {
        var iceCandidate: @Sendable (UInt32, String) -> Void
        /// A remote stream arrived: build nothing, just say which kind (the receive bin is built by
        /// ``attachReceiveBin(for:pad:sources:decoded:)`` from `padAdded`).
        var padAdded: @Sendable (UnsafeMutablePointer<GstPad>) -> Void
        /// The first RTP packet of a kind left the payloader.
        var firstPacketSent: @Sendable (Kind) -> Void
    }

    /// What webrtcbin is told about ICE.
    struct ICE: Sendable, Equatable {
        var stun: String?
        var turn: [String] = []
        var relayOnly = false

        init() {}

        /// The engine's configuration with the servers a channel's transport handed over.
        init(_ configuration: ICEConfiguration, adding joined: [ICEServer]) {
            (stun, turn) = ICEConfiguration.gstreamerURLs(configuration.servers + joined)
            relayOnly = configuration.transportPolicy == .relay
        }
    }

    /// Builds the link for `id` inside `pipeline`, linked to its tees, with `ice`'s servers and policy, sending with
    /// `payloadTypes`, and sets it playing.
    static func add(
        id: Int, to media: MediaPipeline, ice: ICE, payloadTypes: RTPPayloadTypes = .ours, callbacks: Callbacks
    ) throws(WebRTCEngineError) -> PeerLink {
        let (video, audio) = (payloadTypes.video, payloadTypes.audio)
        let description = """
            queue name=vq leaky=downstream max-size-buffers=2 \
            ! valve name=vvalve drop=true drop-mode=forward-sticky-events \
            ! vp8enc name=venc deadline=1 cpu-used=8 keyframe-max-dist=60 target-bitrate=600000 \
            error-resilient=partitions \
            ! rtpvp8pay name=vpay pt=\(video) picture-id-mode=15-bit \
            ! application/x-rtp,media=video,encoding-name=VP8,payload=\(video),clock-rate=90000,\
            rtcp-fb-nack-pli=(boolean)true \
            ! webrtcbin name=webrtc latency=100 \
            queue name=aq leaky=downstream max-size-buffers=4 \
            ! valve name=avalve drop=true drop-mode=forward-sticky-events \
            ! opusenc name=aenc frame-size=20 ! rtpopuspay name=apay pt=\(audio) \
            ! application/x-rtp,media=audio,encoding-name=OPUS,payload=\(audio),clock-rate=48000,\
            encoding-params=(string)2 ! webrtc.
            """
        let bin = try GStreamerRuntime.makeBin(description, ghostPads: false)
        gst_object_set_name(cgst_object(bin.pointer), "peer-\(id)")
        guard let webrtc = bin.child("webrtc"), let videoValve = bin.child("vvalve"),
            let audioValve = bin.child("avalve"), let videoEncoder = bin.child("venc"),
            let videoQueue = bin.child("vq"), let audioQueue = bin.child("aq")
        else {
            gst_object_unref(bin.pointer)
            throw WebRTCEngineError(.pipeline, "peer bin lacks its elements")
        }
        // Before anything gathers: ICE servers are read when the agent starts gathering (set-local-description).
        if let stun = ice.stun { webrtc.set("stun-server", stun) }
        for url in ice.turn { _ = cgst_webrtc_add_turn_server(webrtc.pointer, url) }
        // GstWebRTCICETransportPolicy: 0 all, 1 relay.
        if ice.relayOnly { cgst_set_int(webrtc.pointer, "ice-transport-policy", 1) }
        _ = gst_bin_add(cgst_bin(media.pipeline.pointer), bin.pointer)
        GstCallbacks.connectIceCandidate(webrtc, IceCandidateBox(callbacks.iceCandidate))
        GstCallbacks.connectPadAdded(webrtc, PadAddedBox(callbacks.padAdded))
        for (name, kind) in [("vpay", Kind.video), ("apay", Kind.audio)] {
            guard let pad = bin.child(name)?.pad("src") else { continue }
            GstCallbacks.addDataProbe(
                pad,
                DataProbeBox {
                    callbacks.firstPacketSent(kind)
                    return false
                })
            gst_object_unref(pad)
        }
        // Playing before the tees feed it: a tee pushing into a pad that is still flushing gets
        // GST_FLOW_FLUSHING back and passes it to the live source, whose task then stops for good (no
        // more capture for anyone, and this peer never gets media).
        if gst_element_sync_state_with_parent(bin.pointer) == 0 {
            gst_element_set_state(bin.pointer, GST_STATE_NULL)
            _ = gst_bin_remove(cgst_bin(media.pipeline.pointer), bin.pointer)
            gst_object_unref(bin.pointer)
            throw WebRTCEngineError(.pipeline, "peer bin cannot play")
        }
        let videoTeePad = link(tee: media.videoTee, to: videoQueue, in: bin)
        let audioTeePad = link(tee: media.audioTee, to: audioQueue, in: bin)
        return PeerLink(
            id: id, payloadTypes: payloadTypes, bin: bin, webrtc: webrtc, videoValve: videoValve,
            audioValve: audioValve, videoEncoder: videoEncoder, videoTeePad: videoTeePad, audioTeePad: audioTeePad)
    }

    /// Requests a tee pad and links it, through a ghost pad of `bin`, to `element`'s sink.
    private static func link(tee: ElementRef, to element: ElementRef, in bin: ElementRef) -> PadRef {
        let teePad = gst_element_request_pad_simple(tee.pointer, "src_%u")!
        let target = element.pad("sink")!
        let ghost = gst_ghost_pad_new(nil, target)!
        gst_object_unref(target)
        _ = gst_pad_set_active(ghost, 1)
        _ = gst_element_add_pad(bin.pointer, ghost)
        _ = gst_pad_link(teePad, ghost)
        return PadRef(pointer: teePad)
    }

    /// Unlinks the link from the tees, stops it and drops it.
    func remove(from media: MediaPipeline) {
        gst_element_release_request_pad(media.videoTee.pointer, videoTeePad.pointer)
        gst_element_release_request_pad(media.audioTee.pointer, audioTeePad.pointer)
        gst_object_unref(videoTeePad.pointer)
        gst_object_unref(audioTeePad.pointer)
        gst_element_set_state(bin.pointer, GST_STATE_NULL)
        _ = gst_bin_remove(cgst_bin(media.pipeline.pointer), bin.pointer)
        gst_object_unref(bin.pointer)
    }

    /// Drops our references when the whole pipeline is being torn down (it stops and frees the rest).
    func forget() {
        gst_object_unref(videoTeePad.pointer)
        gst_object_unref(audioTeePad.pointer)
        gst_object_unref(bin.pointer)
    }

    /// Asks the video encoder for a key frame (after the video valve opens).
    func requestKeyFrame() {
        guard let pad = videoEncoder.pad("src") else { return }
        _ = cgst_request_key_frame(pad)
        gst_object_unref(pad)
    }

    /// The elements of a receive bin that the engine adjusts.
    struct ReceiveBin: Sendable {
        let kind: Kind
        let valve: ElementRef
        /// Audio only.
        let volume: ElementRef?
    }

    /// Builds the receive bin for a new webrtcbin source `pad` (on the thread that added it, so no packet
    /// meets an unlinked pad) and links it. `decoded` sees every decoded buffer. `nil` for a pad of
    /// another kind.
    func attachReceiveBin(
        for pad: UnsafeMutablePointer<GstPad>, sources: WebRTCMediaSources, decoded: BufferProbeBox
    ) -> ReceiveBin? {
        guard gst_pad_get_direction(pad) == GST_PAD_SRC, let kind = Self.kind(of: pad) else { return nil }
        let description: String
        switch kind {
        case .video:
            description = """
                valve name=rvalve drop=true drop-mode=forward-sticky-events \
                ! rtpvp8depay request-keyframe=true wait-for-keyframe=true ! vp8dec name=dec \
                ! fakesink sync=false async=false
                """
        case .audio:
            description = """
                valve name=rvalve drop=true drop-mode=forward-sticky-events \
                ! rtpopusdepay ! opusdec name=dec ! audioconvert ! volume name=vol \
                ! \(sources.audioOutputDescription)
                """
        }
        guard let receive = try? GStreamerRuntime.makeBin(description, ghostPads: true) else { return nil }
        guard let valve = receive.child("rvalve"), let decoder = receive.child("dec") else {
            gst_object_unref(receive.pointer)
            return nil
        }
        _ = gst_bin_add(cgst_bin(bin.pointer), receive.pointer)
        gst_object_unref(receive.pointer)  // the peer bin holds it now
        if let decodedPad = decoder.pad("src") {
            GstCallbacks.addBufferProbe(decodedPad, decoded)
            gst_object_unref(decodedPad)
        }
        if let sink = receive.pad("sink") {
            _ = gst_pad_link(pad, sink)
            gst_object_unref(sink)
        }
        _ = gst_element_sync_state_with_parent(receive.pointer)
        return ReceiveBin(kind: kind, valve: valve, volume: receive.child("vol"))
    }

    /// The media kind of a webrtcbin source pad, from its caps (set when the pad is added). Not from its
    /// transceiver: with bundling, a stream can arrive on the pad of a transceiver of the other kind.
    static func kind(of pad: UnsafeMutablePointer<GstPad>) -> Kind? {
        guard let caps = gst_pad_get_current_caps(pad) ?? gst_pad_query_caps(pad, nil) else { return nil }
        defer { gst_caps_unref(caps) }
        guard gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0),
            let media = gst_structure_get_string(structure, "media")
        else { return nil }
        return Kind(rawValue: String(cString: media))
    }
}
