import CallAPIServer
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

    @Test func twoPhonesPlaceAndEndACall() async throws {
        let server = try await TestServer.start()
        let serverURL = "ws://127.0.0.1:\(server.port)"
        let bob = try CLIProcess(
            ["phone", "--server", serverURL, "--user", "1002", "--token", try await server.token("1002")])
        try await bob.expect("signaling: connected as 1002")
        try await bob.expect("call: prepared")
        let alice = try CLIProcess(
            ["phone", "--server", serverURL, "--user", "1001", "--token", try await server.token("1001")])
        try await alice.expect("online: 1001, 1002")
        try await alice.expect("call: prepared")
        try await bob.expect("presence: 1001 is online")
        alice.type("call 1002")
        try await bob.expect("call: calling (remoteVideoCall) peer 1001")
        bob.type("accept")
        try await alice.expect("call: connected")
        try await bob.expect("call: connected")
        alice.type("hangup")
        try await alice.expect("call: prepared (localHangup)")
        try await bob.expect("call: prepared (remoteHangup)")
        alice.type("quit")
        #expect(try await alice.finish() == 0)
        try await bob.expect("presence: 1001 is offline")
        #expect(try await bob.finish() == 0)
        try await server.stop()
    }

    @Test func phoneWithABadTokenSaysWhyAndFails() async throws {
        let server = try await TestServer.start()
        let phone = try CLIProcess([
            "phone", "--server", "ws://127.0.0.1:\(server.port)", "--user", "1001", "--token", "bad",
        ])
        try await phone.expect("login refused (invalid_token)")
        #expect(try await phone.finish() != 0)
        try await server.stop()
    }
}
