import CallAPIServerTesting
import Foundation
import Testing

/// `callapi demo --media webrtc --relay-only` through coturn: the demo mints each user's TURN credentials as
/// `callapi serve` does, and with the relay-only policy the call's media can only go through coturn. Both users are in
/// one process in a lab namespace, coturn in the middle one (libnice 0.1.21 sends nothing to a TURN server on loopback,
/// so the lab gives it a real link).
@Suite(
    .enabled(if: CLIProcess.buildsWebRTC, "built without the WebRTC engine"),
    .enabled(
        if: TURNServer.executable != nil, "CALLAPI_TEST_TURNSERVER is not set (scripts/services/install-coturn.sh)"))
struct RelayOnlyDemoTests {
    @Test(.enabled(if: NetworkLab.isAvailable, "network namespaces need root and ip"))
    func theDemoConnectsThroughCoturnWithMintedCredentialsAndTheRelayOnlyPolicy() async throws {
        let lab = try NetworkLab.make("demo")
        defer { lab.remove() }
        let turn = try await TURNServer.start(in: lab.t, addresses: [lab.tAddressForA])
        let url = "turn:\(lab.tAddressForA):3478?transport=udp"
        let demo = try CLIProcess(
            namespace: lab.a,
            ["demo", "--media", "webrtc", "--ice-servers", url, "--turn-secret-file", turn.secretFile, "--relay-only"])
        try await demo.expect("ICE servers \(url), relay only", within: 20)
        try await demo.expect("state connected(recvRemoteFirstFrame)", within: 30)
        #expect(try await demo.finish(within: 60) == 0)
        try await demo.outputRead()
        #expect(demo.printed.contains { $0.contains("ended prepared(localHangup)") }, "\(demo.printed)")
        // Both users allocated a relay and let the other's relayed address through: the media went through coturn.
        #expect(turn.logged("ALLOCATE processed, success") >= 2)
        #expect(turn.logged("CREATE_PERMISSION processed, success") >= 2)
        try await turn.stop()
    }

    @Test func iceServersWithoutRealMediaOrASecretAreRefusedWithTheReason() async throws {
        let simulated = try CLIProcess(["demo", "--ice-servers", "stun:127.0.0.1:3478"])
        try await simulated.expect("--ice-servers needs --media webrtc")
        #expect(try await simulated.finish() != 0)
        let noSecret = try CLIProcess(["demo", "--media", "webrtc", "--ice-servers", "turn:127.0.0.1:3478"])
        try await noSecret.expect("TURN servers need the secret shared with them")
        #expect(try await noSecret.finish() != 0)
        let alone = try CLIProcess(["demo", "--relay-only"])
        try await alone.expect("--turn-secret-file and --relay-only need --ice-servers")
        #expect(try await alone.finish() != 0)
    }
}
