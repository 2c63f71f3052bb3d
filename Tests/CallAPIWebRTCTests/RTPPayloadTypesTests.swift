import Testing

@testable import CallAPIWebRTC

/// An answering engine sends with the offer's payload types (a browser's Opus is 111; webrtcbin would otherwise answer
/// the audio line `recvonly`).
@Suite struct RTPPayloadTypesTests {
    @Test func anOfferFromChromiumGivesItsVP8AndOpusNumbers() {
        let offer = """
            v=0\r
            m=video 9 UDP/TLS/RTP/SAVPF 96 97 102\r
            a=rtpmap:96 VP8/90000\r
            a=rtpmap:97 rtx/90000\r
            a=rtpmap:102 H264/90000\r
            m=audio 9 UDP/TLS/RTP/SAVPF 111 63\r
            a=rtpmap:111 opus/48000/2\r
            a=rtpmap:63 red/48000/2\r
            """
        #expect(RTPPayloadTypes.offered(in: offer) == RTPPayloadTypes(video: 96, audio: 111))
    }

    @Test func theFirstMappingOfEachCodecCountsWhateverItsCase() {
        let offer =
            "a=rtpmap:120 vp8/90000\na=rtpmap:121 VP8/90000\na=rtpmap:109 OPUS/48000\na=rtpmap:110 opus/48000/2\n"
        #expect(RTPPayloadTypes.offered(in: offer) == RTPPayloadTypes(video: 120, audio: 109))
    }

    @Test func aCodecTheOfferLacksOrMisnumbersKeepsOurs() {
        #expect(RTPPayloadTypes.offered(in: "a=rtpmap:111 opus/48000/2\n") == RTPPayloadTypes(video: 96, audio: 111))
        #expect(RTPPayloadTypes.offered(in: "a=rtpmap:300 VP8/90000\na=rtpmap:x opus/48000\n") == .ours)
        #expect(RTPPayloadTypes.offered(in: "a=rtpmap:100 VP8/48000\n") == .ours)
        #expect(RTPPayloadTypes.offered(in: "") == .ours)
    }
}
