import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import Foundation
import Testing

/// `callapi token` and two `callapi phone`s against a real server: the README's walk-through, driven by what the
/// phones print.
@Suite(.enabled(if: CLIProcess.executable != nil, "needs the built callapi executable"))
struct CommandLineTests {
    let secret = "test-secret-0123456789-0123456789-abcdef"

    @Test func tokenCommandMintsTokensTheServerAccepts() async throws {
        let server = try await TestServer.start()
        let command = try CLIProcess(
            ["token", "--user", "1001", "--ttl", "60"], environment: ["CALLAPI_SECRET": secret])
        let token = try await command.expect("eyJ")
        #expect(try await command.finish() == 0)
        let welcome = try await RawSocket(url: server.url).login(token)
        #expect(welcome.userId == "1001")
        try await server.stop()
    }

    @Test func tokenCommandMintsChannelTokensWithRTC() async throws {
        let server = try await TestServer.start()
        let command = try CLIProcess(
            ["token", "--rtc", "--channel", "room-9", "--user", "1001", "--ttl", "60"],
            environment: ["CALLAPI_SECRET": secret])
        let token = try await command.expect("eyJ")
        #expect(try await command.finish() == 0)
        let answer = try await RawSocket(url: server.rtcURL).join(channel: "room-9", uid: 1001, token: token)
        guard case .joined = answer else {
            Issue.record("the channel token was refused: \(answer)")
            return
        }
        try await server.stop()
    }

    @Test func tokenCommandExplainsThatRTCNeedsAChannel() async throws {
        let command = try CLIProcess(["token", "--rtc", "--user", "1001"], environment: ["CALLAPI_SECRET": secret])
        try await command.expect("--rtc needs --channel")
        #expect(try await command.finish() != 0)
    }

    /// `callapi phone` for `user` on `server`: simulated media, or real media with per-call tokens minted
    /// through the admin endpoint and the first remote frame saved into `snapshots`.
    func phone(_ user: String, on server: TestServer, media: String, snapshots: String? = nil) async throws
        -> CLIProcess
    {
        var arguments = [
            "phone", "--server", "ws://127.0.0.1:\(server.port)", "--user", user, "--token",
            try await server.token(user), "--media", media,
        ]
        if media == "webrtc" { arguments += ["--admin-key", "test-admin-key"] }
        if let snapshots { arguments += ["--snapshot", snapshots] }
        return try CLIProcess(arguments)
    }

    static var mediaKinds: [String] { CLIProcess.buildsWebRTC ? ["none", "webrtc"] : ["none"] }

    @Test(arguments: mediaKinds)
    func twoPhonesPlaceAndEndACall(media: String) async throws {
        let server = try await TestServer.start()
        let snapshots = FileManager.default.temporaryDirectory.appendingPathComponent("phones-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: snapshots, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: snapshots) }
        let bob = try await phone(
            "1002", on: server, media: media, snapshots: media == "webrtc" ? snapshots.path : nil)
        try await bob.expect("signaling: connected as 1002")
        try await bob.expect("call: prepared")
        let alice = try await phone("1001", on: server, media: media)
        try await alice.expect("online: 1001, 1002")
        try await alice.expect("call: prepared")
        try await bob.expect("presence: 1001 is online")
        alice.type("call 1002")
        try await bob.expect("call: calling (remoteVideoCall) peer 1001")
        bob.type("accept")
        if media == "webrtc" {
            // Connected on a frame decoded from the other process, and that frame saved.
            try await alice.expect("call: connected (recvRemoteFirstFrame)", within: 20)
            try await bob.expect("call: connected (recvRemoteFirstFrame)", within: 20)
            let saved = try await bob.expect("snapshot: saved", within: 20)
            let path = String(saved[saved.range(of: "saved ")!.upperBound...])
            let png = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
            // IHDR: width and height, big-endian, at bytes 16 and 20.
            let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }
            let height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
            #expect(width == 320 && height == 240)
        } else {
            try await alice.expect("call: connected")
            try await bob.expect("call: connected")
        }
        alice.type("hangup")
        try await alice.expect("call: prepared (localHangup)")
        try await bob.expect("call: prepared (remoteHangup)")
        // Each phone reported the call as it ended: both lanes are on its time line (docs/timeline.md).
        let record = try #require(try await server.server.calls(CallQuery(userId: "1001")).calls.first)
        var lanes: [String] = []
        for _ in 0..<200 where lanes.count < 3 {
            let (_, body) = try await server.admin("GET", "/v1/calls/\(record.callId)/timeline")
            lanes = (try? JSONDecoder().decode(CallTimeline.self, from: Data(body.utf8)))?.lanes.map(\.name) ?? []
            if lanes.count < 3 { try await Task.sleep(for: .milliseconds(25)) }
        }
        #expect(lanes.count == 3 && lanes.first == "server", "\(lanes)\n\(bob.printed.suffix(3))")
        #expect(lanes.dropFirst().map { $0.prefix(5) } == ["1001/", "1002/"])
        alice.type("quit")
        #expect(try await alice.finish() == 0)
        try await bob.expect("presence: 1001 is offline")
        #expect(try await bob.finish() == 0)
        try await server.stop()
    }

    #if os(Linux)
        @Test(.enabled(if: CLIProcess.buildsWebRTC, "built without the WebRTC engine"))
        func aPhoneWhoseProcessIsKilledIsSeenLeavingTheRoom() async throws {
            let server = try await TestServer.start()
            let bob = try await phone("1002", on: server, media: "webrtc")
            try await bob.expect("call: prepared")
            let alice = try await phone("1001", on: server, media: "webrtc")
            try await alice.expect("call: prepared")
            alice.type("call 1002")
            try await bob.expect("call: calling (remoteVideoCall) peer 1001")
            bob.type("accept")
            try await alice.expect("call: connected (recvRemoteFirstFrame)", within: 20)
            bob.kill()
            // The server sees the room socket drop (reason 1); the engine reports the peer gone.
            try await alice.expect("event: remoteLeft (1)", within: 20)
            alice.type("quit")
            #expect(try await alice.finish() == 0)
            try await server.stop()
        }

        @Test(.enabled(if: CLIProcess.buildsWebRTC, "built without the WebRTC engine"))
        func phoneWithoutTokenFlagsSaysWhereItsRoomTokensComeFrom() async throws {
            let server = try await TestServer.start()
            let phone = try CLIProcess([
                "phone", "--server", "ws://127.0.0.1:\(server.port)", "--user", "1001", "--token",
                try await server.token("1001"),
            ])
            try await phone.expect("media: per-call room tokens from the development server")
            try await phone.expect("call: prepared")
            phone.type("quit")
            #expect(try await phone.finish() == 0)
            try await server.stop()
        }

        /// Production stays strict: a server with its own secret and admin key refuses the development admin key,
        /// so a phone without token flags cannot join call rooms there, and says what to do.
        @Test(.enabled(if: CLIProcess.buildsWebRTC, "built without the WebRTC engine"))
        func phoneWithoutTokenFlagsOnAProductionServerSaysToPassAnAdminKey() async throws {
            let server = try await TestServer.start()
            func phone(_ user: String, _ extra: [String] = []) async throws -> CLIProcess {
                try CLIProcess(
                    [
                        "phone", "--server", "ws://127.0.0.1:\(server.port)", "--user", user, "--token",
                        try await server.token(user),
                    ] + extra)
            }
            // Bob's media is simulated (it needs no room token): with real media on both, whichever phone's join
            // fails first ends the call, and the other never gets to say why.
            let bob = try await phone("1002", ["--media", "none"])
            try await bob.expect("call: prepared")
            let alice = try await phone("1001")
            try await alice.expect("call: prepared")
            alice.type("call 1002")
            try await alice.expect("not in development mode: start the phone with --admin-key or --rtc-token")
            try await alice.expect("call: failed (joinRTCFailed)")
            alice.type("quit")
            bob.type("quit")
            _ = try await alice.finish()
            _ = try await bob.finish()
            try await server.stop()
        }
    #endif

    @Test func phoneWithABadTokenSaysWhyAndFails() async throws {
        let server = try await TestServer.start()
        let phone = try CLIProcess([
            "phone", "--server", "ws://127.0.0.1:\(server.port)", "--user", "1001", "--token", "bad", "--media", "none",
        ])
        try await phone.expect("login refused (invalid_token)")
        #expect(try await phone.finish() != 0)
        try await server.stop()
    }
}
