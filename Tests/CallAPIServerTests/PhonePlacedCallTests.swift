import CallAPIServerTesting
import Foundation
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// `POST /v1/calls` between two real `callapi phone` processes: the caller's phone places the call the server
/// asks for, with the server's call id, and the callee's phone rings (docs/match.md).
@Suite(.enabled(if: CLIProcess.executable != nil, "needs the built callapi executable"))
struct PhonePlacedCallTests {
    struct Placed: Decodable { var callId: String }

    func phone(_ user: String, on server: TestServer) async throws -> CLIProcess {
        try CLIProcess([
            "phone", "--server", "ws://127.0.0.1:\(server.port)", "--user", user, "--token",
            try await server.token(user), "--media", "none",
        ])
    }

    @Test func aPhonePlacesTheCallTheBusinessServerAsksForAndTheCalleesPhoneRings() async throws {
        let server = try await TestServer.start()
        let bob = try await phone("1002", on: server)
        try await bob.expect("call: prepared")
        let alice = try await phone("1001", on: server)
        try await alice.expect("call: prepared")

        let (status, body) = try await httpRequest(
            "\(server.httpBase)/v1/calls", method: "POST",
            headers: ["Authorization": "Bearer test-admin-key", "Content-Type": "application/json"],
            body: "{\"caller\":\"1001\",\"callee\":\"1002\"}")
        #expect(status == 201)
        let callId = try JSONDecoder().decode(Placed.self, from: Data(body.utf8)).callId
        try await alice.expect("server: placing call \(callId) to 1002")
        try await alice.expect("call: calling (localVideoCall) peer 1002 call \(callId)")
        try await bob.expect("call: calling (remoteVideoCall) peer 1001 call \(callId)")
        bob.type("accept")
        try await alice.expect("call: connected")
        try await bob.expect("call: connected")
        alice.type("hangup")
        try await bob.expect("call: prepared (remoteHangup)")
        alice.type("quit")
        bob.type("quit")
        #expect(try await alice.finish() == 0)
        #expect(try await bob.finish() == 0)
        // The ledger has the call under the id the business server got, completed (not failed/notPlaced).
        var history = ""
        for _ in 0..<50 where !history.contains(callId) {
            try await Task.sleep(for: .milliseconds(100))
            history = try await httpRequest(
                "\(server.httpBase)/v1/users/1001/calls", headers: ["Authorization": "Bearer test-admin-key"]
            ).1
        }
        #expect(history.contains(callId))
        #expect(history.contains("\"outcome\":\"completed\""))
        try await server.stop()
    }
}
