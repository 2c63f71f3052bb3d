import CallAPIServerCore
import CallAPISignalProtocol
import Testing

/// The ICE servers a channel member gets with `joined`, and their TURN credentials (the TURN REST API scheme).
@Suite struct ICESettingsTests {
    let t0: Int64 = 1_800_000_000_000

    @Test func turnCredentialsAreTheRESTSchemesHMACOfTheExpiryAndUser() {
        // The expected password from `printf '%s' 1700000000:1001 | openssl dgst -sha1 -hmac s3cret -binary | base64`.
        let credentials = ICESettings.turnCredentials(secret: "s3cret", user: "1001", expiresAt: 1_700_000_000)
        #expect(credentials.username == "1700000000:1001")
        #expect(credentials.password == "C4eUPCkIIHMEwichHTgDh2eL9pw=")
    }

    @Test func eachMemberGetsSTUNAsGivenAndTURNWithCredentialsOfItsOwnThatExpireAfterTheTTL() throws {
        let ice = try ICESettings(
            urls: [
                "stun:stun.example.org:3478", "turn:turn.example.org:3478?transport=udp", "turns:turn.example.org:5349",
            ],
            turnSecret: "s3cret", credentialSeconds: 600)
        let servers = ice.servers(for: 1001, now: t0)
        #expect(servers.count == 2)
        #expect(servers[0] == ICEServer(urls: ["stun:stun.example.org:3478"]))
        #expect(servers[1].urls == ["turn:turn.example.org:3478?transport=udp", "turns:turn.example.org:5349"])
        let expiry = t0 / 1000 + 600
        #expect(servers[1].username == "\(expiry):1001")
        #expect(
            servers[1].credential
                == ICESettings.turnCredentials(secret: "s3cret", user: "1001", expiresAt: expiry).password)
        #expect(ice.servers(for: 1002, now: t0)[1].username == "\(expiry):1002")
    }

    @Test func noServersByDefault() {
        #expect(ICESettings().servers(for: 1001, now: t0).isEmpty)
    }

    @Test func badURLsAndTURNWithoutASecretAreRefusedWithTheReason() {
        #expect(throws: ICESettings.Invalid.self) { try ICESettings(urls: ["http://x"], turnSecret: nil) }
        #expect(throws: ICESettings.Invalid.self) { try ICESettings(urls: ["stun:"], turnSecret: nil) }
        do {
            _ = try ICESettings(urls: ["turn:turn.example.org:3478"], turnSecret: nil)
            Issue.record("TURN without a secret was accepted")
        } catch {
            #expect(error.description.contains("turn-secret-file"))
        }
        #expect(throws: ICESettings.Invalid.self) {
            try ICESettings(urls: ["stun:x:3478"], turnSecret: nil, credentialSeconds: 0)
        }
    }

    @Test func theJoinedFrameCarriesTheMembersICEServers() throws {
        let ice = try ICESettings(urls: ["turn:198.18.1.1:3478"], turnSecret: "s3cret")
        var state = ChannelState(limits: ChannelLimits(), ice: ice)
        let session = SessionID(1)
        _ = state.handle(.connected(session), now: t0)
        _ = state.handle(.frame(session, .join(.init(channel: "room", uid: 1001, token: "t"))), now: t0)
        let actions = state.handle(
            .tokenChecked(
                session, purpose: .join,
                result: .valid(userId: "1001", channel: "room", expiresAt: t0 + 3_600_000, issuedAt: t0)),
            now: t0)
        let joined = try #require(
            actions.lazy.compactMap { action -> ChannelServerFrame.Joined? in
                if case .send(_, .joined(let joined)) = action { joined } else { nil }
            }.first)
        #expect(joined.iceServers == ice.servers(for: 1001, now: t0))
    }
}
