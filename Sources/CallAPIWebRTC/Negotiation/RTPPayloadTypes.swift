/// The RTP payload types a peer link sends VP8 and Opus with.
///
/// webrtcbin answers an offer with the payload types its send caps carry, and when they differ from the offer's it
/// answers that media line `recvonly`: a browser offering Opus as 111 (Chromium does) would hear nothing. So an
/// answerer sends with the numbers the offer chose (``offered(in:)``); an offerer uses ours, which browsers answer with.
struct RTPPayloadTypes: Sendable, Equatable {
    var video: Int
    var audio: Int

    /// What this engine offers: VP8 96, Opus 97.
    static let ours = RTPPayloadTypes(video: 96, audio: 97)

    /// The first VP8/90000 and Opus/48000 payload types an offer maps (`a=rtpmap:<pt> <codec>/<rate>`), each kept
    /// as ours when the offer has none.
    static func offered(in sdp: String) -> RTPPayloadTypes {
        var types = RTPPayloadTypes.ours
        var found: (video: Bool, audio: Bool) = (false, false)
        for line in sdp.split(whereSeparator: \.isNewline) where line.hasPrefix("a=rtpmap:") {
            let fields = line.dropFirst("a=rtpmap:".count).split(separator: " ", maxSplits: 1)
            guard fields.count == 2, let type = Int(fields[0]), (0...127).contains(type) else { continue }
            switch fields[1].lowercased().split(separator: "/").prefix(2).joined(separator: "/") {
            case "vp8/90000" where !found.video:
                types.video = type
                found.video = true
            case "opus/48000" where !found.audio:
                types.audio = type
                found.audio = true
            default:
                continue
            }
        }
        return types
    }
}
