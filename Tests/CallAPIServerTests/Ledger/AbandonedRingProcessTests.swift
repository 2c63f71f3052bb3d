import CallAPIServer
import CallAPIServerTesting
import CallAPISignalClient
import Foundation
import Testing

/// The abandoned ring over a `callapi serve` process with `--ledger-ring-timeout 1`: a call whose two sides say
/// nothing more is ended by the server within its own tick of the window, and each side gets the other's
/// timed-out cancel. The wait is for the server's own timer (a second), not a sleep of the test's.
@Suite(.enabled(if: CLIProcess.executable != nil, "the callapi executable is not built"))
struct AbandonedRingProcessTests {
    let secret = "a-test-secret-that-is-long-enough-0123456789"

    func client(_ user: String, port: Int) async throws -> (SignalClient, AsyncStream<SignalClientEvent>) {
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret), clock: SystemServerClock())
        let token = try await authority.issue(userId: user, ttlSeconds: 3600).token
        let client = SignalClient(configuration: .init(url: "ws://127.0.0.1:\(port)/v1/signal"), logger: quietLogger)
        let events = client.events()
        try await client.login(token: token)
        return (client, events)
    }

    /// The next message `events` carries from `sender`.
    func message(from sender: String, in events: AsyncStream<SignalClientEvent>) async throws -> String {
        try await withTimeout(10, "a message from \(sender)") {
            for await event in events {
                if case .message(let from, let body, _) = event, from == sender { return body }
            }
            throw TimedOut(what: "a message from \(sender)")
        }
    }

    @Test func aServeProcessEndsARingBothSidesLeftSilentWithTheirTimedOutCancels() async throws {
        let serve = try CLIProcess(["serve", "--port", "0", "--secret", secret, "--ledger-ring-timeout", "1"])
        let line = try await serve.expect("listening on ws://127.0.0.1:")
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0.prefix(while: \.isNumber)) })
        let (caller, callerEvents) = try await client("1001", port: port)
        let (callee, calleeEvents) = try await client("1002", port: port)

        let call =
            "{\"message_action\":0,\"message_version\":\"1.0\",\"message_timestamp\":1,\"fromUserId\":1001,"
            + "\"callId\":\"ring-7\",\"remoteUserId\":1002,\"fromRoomId\":\"room-1001\"}"
        _ = try await caller.send(to: "1002", body: call)
        #expect(try await message(from: "1001", in: calleeEvents).contains("\"callId\":\"ring-7\""))

        // Neither side says anything more: the server ends the ring and tells both.
        let toCallee = try await message(from: "1001", in: calleeEvents)
        let toCaller = try await message(from: "1002", in: callerEvents)
        for cancel in [toCallee, toCaller] {
            #expect(cancel.contains("\"message_action\":1"))
            #expect(cancel.contains("\"callId\":\"ring-7\""))
            #expect(cancel.contains("\"cancelCallByInternal\":1"))
        }
        caller.logout()
        callee.logout()
        serve.interrupt()
        #expect(try await serve.finish() == 0)
    }
}
