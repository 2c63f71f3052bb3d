import ArgumentParser
import CallAPI
import CallAPIServerCore
import CallAPITesting
import Foundation

#if CALLAPI_WEBRTC
    import CallAPISignalProtocol
    import CallAPIWebRTC
#endif

/// The media plane of `callapi phone` and `callapi demo`.
enum PhoneMedia: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// Real audio and video: GStreamer's webrtcbin, peer to peer (Linux with GStreamer installed).
    case webrtc
    /// Simulated media: a call is connected as soon as it is accepted.
    case none

    /// WebRTC where this build has it.
    static var preferred: PhoneMedia { isWebRTCAvailable ? .webrtc : .none }

    static var isWebRTCAvailable: Bool {
        #if CALLAPI_WEBRTC
            true
        #else
            false
        #endif
    }

    /// Why real media cannot run here (`nil` when it can): built without it, or GStreamer elements missing.
    static var webrtcUnavailableReason: String? {
        #if CALLAPI_WEBRTC
            let missing = WebRTCEngine.missingElements
            guard !missing.isEmpty else { return nil }
            let names = missing.joined(separator: ", ")
            return "GStreamer elements missing: \(names) (scripts/setup-webrtc.sh installs them)"
        #else
            return "this build has no WebRTC engine (Linux: scripts/setup-webrtc.sh, then build with CALLAPI_WEBRTC=1)"
        #endif
    }
}

/// Makes the phone's engine and the canvas its first remote frame is saved through.
enum PhoneEngineFactory {
    /// Where the phone's camera and microphone come from and where remote audio goes.
    struct Sources: Sendable {
        /// A V4L2 device such as `/dev/video0`; `nil`: the test pattern (or the media file).
        var camera: String?
        /// A media file whose video and audio are sent instead of the test sources.
        var mediaFile: String?
        /// Play remote audio on the default sound device instead of discarding it.
        var speaker = false
    }

    /// The phone's own ICE settings (the server adds its TURN servers with each room).
    struct ICE: Sendable {
        /// `stun:` URLs for every call.
        var stunURLs: [String] = []
        /// Media only through TURN relays.
        var relayOnly = false
    }

    /// A WebRTC engine meeting peers through the RTC channels of `servers` (a cluster's nodes, tried in turn), as
    /// `device` (the phone's CallAPI device id: a user's phones ring in one room together).
    static func webrtc(servers: [String], sources: Sources = Sources(), ice: ICE = ICE(), device: String? = nil) throws
        -> any CallRTCEngine
    {
        #if CALLAPI_WEBRTC
            if let reason = PhoneMedia.webrtcUnavailableReason { throw ValidationError(reason) }
            var media = WebRTCMediaSources()
            if let file = sources.mediaFile {
                media.video = .file(file)
                media.audio = .file(file)
            }
            if let camera = sources.camera { media.video = .device(camera) }
            if sources.speaker { media.audioOutput = .speaker }
            return WebRTCEngine(
                transport: ServerChannelTransport(urls: servers), sources: media,
                ice: ICEConfiguration(
                    servers: ice.stunURLs.isEmpty ? [] : [ICEServer(urls: ice.stunURLs)],
                    transportPolicy: ice.relayOnly ? .relay : .all), device: device)
        #else
            throw ValidationError(PhoneMedia.webrtcUnavailableReason ?? "no WebRTC engine")
        #endif
    }

    /// WebRTC engines for users in one process, meeting through an in-process channel hub.
    /// `ice`'s servers are handed to each user as `callapi serve` hands them to a room member (TURN with credentials
    /// minted for that user); with `relayOnly`, media goes only through TURN relays.
    static func inProcessWebRTC(ice: ICESettings = ICESettings(), relayOnly: Bool = false) throws
        -> @Sendable (UInt) -> any CallRTCEngine
    {
        #if CALLAPI_WEBRTC
            if let reason = PhoneMedia.webrtcUnavailableReason { throw ValidationError(reason) }
            let hub = InProcessChannelHub()
            return { user in
                let servers = ice.servers(for: user, now: Int64(Date().timeIntervalSince1970 * 1000))
                return WebRTCEngine(
                    transport: hub, label: "webrtc-\(user)",
                    ice: ICEConfiguration(servers: servers, transportPolicy: relayOnly ? .relay : .all))
            }
        #else
            throw ValidationError(PhoneMedia.webrtcUnavailableReason ?? "no WebRTC engine")
        #endif
    }

    /// A canvas that saves the first frame it is shown as a PNG at `path` (`nil` without real media).
    static func snapshotCanvas(path: String) -> (any CallCanvas)? {
        #if CALLAPI_WEBRTC
            FrameSnapshotCanvas(path: path)
        #else
            nil
        #endif
    }

    /// Waits until `canvas` has saved its frame; whether it did.
    static func waitUntilSaved(_ canvas: any CallCanvas) async -> Bool {
        #if CALLAPI_WEBRTC
            await (canvas as? FrameSnapshotCanvas)?.waitUntilSaved() ?? false
        #else
            false
        #endif
    }
}
