import Foundation

/// One media-signaling message between two members of a channel, relayed by a ``WebRTCChannelTransport``.
///
/// Transports treat it as opaque: ``jsonText`` and ``init(jsonText:)`` give a stable JSON form
/// (`{"type":"offer","sdp":"..."}`, `{"type":"ice","mline":0,"candidate":"..."}`,
/// `{"type":"media","audio":true,"video":false}`, `{"type":"publishing","audio":false,"video":false}`,
/// `{"type":"restart","generation":2}`) for relays that carry text.
public enum WebRTCSignal: Sendable, Equatable, Codable {
    /// A session description offer (SDP text). Sent by the member with the lower uid.
    case offer(sdp: String)
    /// The answer to an offer (SDP text).
    case answer(sdp: String)
    /// A trickled ICE candidate for media line `mline`.
    case iceCandidate(mline: UInt32, candidate: String)
    /// Which kinds the sender wants to receive; the peer stops sending a kind nobody subscribes to.
    case subscription(audio: Bool, video: Bool)
    /// Which kinds the sender publishes now (sent when that changes, and to a newcomer when it is neither):
    /// the receiver reports ``RTCEngineEvent/remotePublishingChanged(channel:uid:audio:video:)``.
    case publishing(audio: Bool, video: Bool)
    /// The sender lost the path to the receiver's media and starts over with a fresh peer link (new ICE
    /// credentials, new candidates, a new DTLS handshake) numbered `generation`; the receiver does the same unless
    /// it already has that generation. Everything the sender signals after it belongs to the new link.
    case restart(generation: Int)

    private enum CodingKeys: String, CodingKey {
        case type, sdp, mline, candidate, audio, video, generation
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "offer": self = .offer(sdp: try container.decode(String.self, forKey: .sdp))
        case "answer": self = .answer(sdp: try container.decode(String.self, forKey: .sdp))
        case "ice":
            self = .iceCandidate(
                mline: try container.decode(UInt32.self, forKey: .mline),
                candidate: try container.decode(String.self, forKey: .candidate))
        case "media":
            self = .subscription(
                audio: try container.decode(Bool.self, forKey: .audio),
                video: try container.decode(Bool.self, forKey: .video))
        case "publishing":
            self = .publishing(
                audio: try container.decode(Bool.self, forKey: .audio),
                video: try container.decode(Bool.self, forKey: .video))
        case "restart": self = .restart(generation: try container.decode(Int.self, forKey: .generation))
        case let other:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "unknown signal type \(other)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .offer(let sdp):
            try container.encode("offer", forKey: .type)
            try container.encode(sdp, forKey: .sdp)
        case .answer(let sdp):
            try container.encode("answer", forKey: .type)
            try container.encode(sdp, forKey: .sdp)
        case .iceCandidate(let mline, let candidate):
            try container.encode("ice", forKey: .type)
            try container.encode(mline, forKey: .mline)
            try container.encode(candidate, forKey: .candidate)
        case .subscription(let audio, let video):
            try container.encode("media", forKey: .type)
            try container.encode(audio, forKey: .audio)
            try container.encode(video, forKey: .video)
        case .publishing(let audio, let video):
            try container.encode("publishing", forKey: .type)
            try container.encode(audio, forKey: .audio)
            try container.encode(video, forKey: .video)
        case .restart(let generation):
            try container.encode("restart", forKey: .type)
            try container.encode(generation, forKey: .generation)
        }
    }

    /// The signal as JSON text.
    public var jsonText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// Parses ``jsonText``; `nil` when it is not a signal.
    public init?(jsonText: String) {
        guard let value = try? JSONDecoder().decode(WebRTCSignal.self, from: Data(jsonText.utf8)) else { return nil }
        self = value
    }
}
