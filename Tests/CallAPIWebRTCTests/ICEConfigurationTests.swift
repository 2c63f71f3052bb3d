import CallAPISignalProtocol
import Testing

@testable import CallAPIWebRTC

/// What webrtcbin is told about ICE servers: its URL forms, with TURN credentials escaped so that it reads them whole.
@Suite struct ICEConfigurationTests {
    @Test func stunAndTURNURLsBecomeWebrtcbinURLsWithTheCredentialsEscaped() {
        let servers = [
            ICEServer(urls: ["stun:stun.example.org:3478", "stun:second.example.org:3478"]),
            ICEServer(
                urls: ["turn:198.18.1.1:3478?transport=udp", "turns:turn.example.org:5349"],
                username: "1795890136:1001", credential: "a/b+c="),
        ]
        let urls = ICEConfiguration.gstreamerURLs(servers)
        // webrtcbin takes one STUN server: the first.
        #expect(urls.stun == "stun://stun.example.org:3478")
        #expect(
            urls.turn == [
                "turn://1795890136%3A1001:a%2Fb%2Bc%3D@198.18.1.1:3478?transport=udp",
                "turns://1795890136%3A1001:a%2Fb%2Bc%3D@turn.example.org:5349",
            ])
    }

    @Test func turnWithoutCredentialsAndUnknownSchemesAreLeftOut() {
        let urls = ICEConfiguration.gstreamerURLs([
            ICEServer(urls: ["turn:198.18.1.1:3478"]), ICEServer(urls: ["http://example.org", "stun:"]),
        ])
        #expect(urls.stun == nil && urls.turn.isEmpty)
    }

    @Test func theEnginesServersComeBeforeTheChannelsAndThePolicyIsKept() {
        let engine = ICEConfiguration(servers: [ICEServer(urls: ["stun:mine:3478"])], transportPolicy: .relay)
        let ice = PeerLink.ICE(
            engine, adding: [ICEServer(urls: ["stun:theirs:3478", "turn:t:3478"], username: "u", credential: "p")])
        #expect(ice.stun == "stun://mine:3478")
        #expect(ice.turn == ["turn://u:p@t:3478"])
        #expect(ice.relayOnly)
    }
}
