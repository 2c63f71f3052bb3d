import CallAPIServer
import CallAPIServerTesting
import CallAPISignalProtocol
import Foundation
import Testing

/// A kick revokes media (docs/protocol.md, "Admin endpoints"): over a `callapi serve` process, a member kicked
/// without a bar cannot come back with the token it had, and a token issued after the kick joins.
@Suite(.enabled(if: CLIProcess.executable != nil, "the callapi executable is not built"))
struct ChannelRevocationTests {
    let secret = "a-test-secret-that-is-long-enough-0123456789"
    let adminKey = "revocation-test-admin-key"

    func rtcToken(_ user: String, channel: String) async throws -> String {
        let authority = try await TokenAuthority.make(key: .hs256(secret: secret), clock: SystemServerClock())
        return try await authority.issue(userId: user, ttlSeconds: 3600, channel: channel).token
    }

    @Test func aKickedMemberCannotRejoinWithItsOldTokenWhileAFreshOneJoins() async throws {
        let serve = try CLIProcess(["serve", "--port", "0", "--secret", secret, "--admin-key", adminKey])
        let line = try await serve.expect("listening on ws://127.0.0.1:")
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0.prefix(while: \.isNumber)) })
        let rtc = "ws://127.0.0.1:\(port)/v1/rtc"

        let old = try await rtcToken("1001", channel: "call-7")
        let member = RawSocket(url: rtc)
        guard case .joined = try await member.join(channel: "call-7", uid: 1001, token: old) else {
            throw TimedOut(what: "the first join")
        }
        let (status, body) = try await httpRequest(
            "http://127.0.0.1:\(port)/v1/channels/call-7/kick", method: "POST",
            headers: ["Authorization": "Bearer \(adminKey)", "Content-Type": "application/json"],
            body: "{\"uid\":1001,\"reason\":\"abuse\"}")
        #expect(status == 200 && body.contains("\"kicked\":true") && body.contains("\"barredUntil\":null"))

        guard
            case .joinFailed(let refused) = try await RawSocket(url: rtc).join(
                channel: "call-7", uid: 1001, token: old)
        else {
            Issue.record("the old token joined again after the kick")
            return
        }
        #expect(refused.errorCode == ChannelErrorCode.tokenRevoked)
        #expect(refused.message.contains("issued before uid 1001 was removed from channel call-7"))

        let fresh = try await rtcToken("1001", channel: "call-7")
        guard case .joined = try await RawSocket(url: rtc).join(channel: "call-7", uid: 1001, token: fresh) else {
            Issue.record("a token issued after the kick was refused")
            return
        }
        serve.interrupt()
        #expect(try await serve.finish() == 0)
    }
}
