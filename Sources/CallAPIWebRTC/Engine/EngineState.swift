import CallAPI
import CallAPISignalProtocol

/// Everything a ``WebRTCEngine`` knows, behind its lock. GStreamer handles in it are only used on the
/// engine's queue, except the receive-bin handles that `pad-added` stores from a streaming thread.
struct EngineState: Sendable {
    var media = RTCMediaOptions.call(.video)
    var previewing = false
    /// The first captured frame since the preview started was reported.
    var captureReported = false
    var localCanvas: (any CallCanvas)?
    var remoteCanvases: [UInt: any CallCanvas] = [:]
    var volumes: [UInt: Int] = [:]
    var pipeline: MediaPipeline?
    var session: ChannelSession?
    /// Tells one join (and one peer link) from the next.
    var nextId = 0

    mutating func makeId() -> Int {
        nextId += 1
        return nextId
    }

    /// Whether the send valves of `peer` should let video and audio through: only once both descriptions
    /// are applied (webrtcbin is not ready for media before), and as publishing and the peer's
    /// subscription say.
    func sends(to peer: PeerState) -> (video: Bool, audio: Bool) {
        guard peer.negotiation.isComplete else { return (false, false) }
        return (
            media.publishCamera && peer.peerSubscribes.video, media.publishMicrophone && peer.peerSubscribes.audio
        )
    }
}

/// One membership of a channel.
struct ChannelSession: Sendable {
    let id: Int
    let channel: String
    let uid: UInt
    /// The token it joined with, or the latest renewal: what a rejoin presents.
    var token: String
    var membership: (any WebRTCChannelMembership)?
    /// Since when the channel's connection has been lost while joined, and how many rejoins were tried: the peer
    /// links stay up meanwhile (media flows peer to peer), until a rejoin succeeds or ``WebRTCEngine/rejoinLimit``
    /// passes.
    var outage: (since: ContinuousClock.Instant, attempts: Int)?
    /// What webrtcbin is given for this channel: the engine's ICE servers, then the transport's (set at `joined`).
    var ice = PeerLink.ICE()
    var joined = false
    /// One link per remote member: a user on two devices is two peers with one uid. Members of this engine's own
    /// uid (its user's other devices) get no link.
    var peers: [ChannelMember: PeerState] = [:]
    var publishedVideo = false
    var publishedAudio = false
    /// The uids whose first decoded video and audio frame were reported: once per uid, whichever of its devices
    /// sends first, until its last device leaves.
    var videoDecoded: Set<UInt> = []
    var audioDecoded: Set<UInt> = []

    /// The peers of `uid`.
    func peers(of uid: UInt) -> [ChannelMember] { peers.keys.filter { $0.uid == uid } }
}

/// One remote member and what is known of the media with it.
struct PeerState: Sendable {
    let member: ChannelMember
    var uid: UInt { member.uid }
    var negotiation: PeerNegotiation
    var link: PeerLink?
    /// What the peer said it wants to receive (everything until it says otherwise).
    var peerSubscribes: (audio: Bool, video: Bool) = (true, true)
    /// Whether the send valves are open now (to request a key frame when video opens).
    var sendingVideo = false
    var receiveVideo: PeerLink.ReceiveBin?
    var receiveAudio: PeerLink.ReceiveBin?
    /// What the peer said it publishes (everything until it says otherwise).
    var peerPublishes: (audio: Bool, video: Bool) = (true, true)
    /// The link's number: 1, then one more at each restart (``WebRTCSignal/restart(generation:)``).
    var generation = 1
    /// Whether the peer's media flows, as the media watch sees it (from the link's creation).
    var flow: MediaFlow
    /// The link's statistics as last read, for the quality of the next period.
    var quality = QualityMeter()
}
