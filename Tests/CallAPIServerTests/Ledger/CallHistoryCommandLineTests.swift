import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import Foundation
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// `callapi calls` and `callapi phone`'s missed calls and `history`, against a real server whose ledger has calls.
@Suite(.enabled(if: CLIProcess.executable != nil, "needs the built callapi executable"))
struct CallHistoryCommandLineTests {
    /// A call from `caller` to `callee` that the caller cancels while it rings (a missed call for the callee).
    func cancelledCall(on server: TestServer, caller: String, callee: String) async throws -> LedgerCall {
        let call = LedgerCall(server: server, caller: caller, callee: callee)
        let a = try await server.loggedIn(caller)
        let b = try await server.loggedIn(callee)
        try await call.call(on: a)
        try await call.send(call.body(1, from: caller), on: a, to: callee)
        a.close()
        b.close()
        return call
    }

    @Test func callsCommandPrintsAUsersHistoryNewestFirst() async throws {
        let server = try await TestServer.start()
        _ = try await cancelledCall(on: server, caller: "1001", callee: "1002")
        let second = LedgerCall(server: server, caller: "1002", callee: "1001")
        let offline = try await server.loggedIn("1002")
        try await second.call(on: offline)  // 1001 is offline: missed
        _ = try await server.server.calls(CallQuery(userId: "1001"))
        let command = try CLIProcess([
            "calls", "--server", server.httpBase, "--admin-key", "test-admin-key", "--user", "1001",
        ])
        try await command.expect("1002 -> 1001  missed")
        try await command.expect("1001 -> 1002  cancelled")
        #expect(try await command.finish() == 0)
        let missed = try CLIProcess([
            "calls", "--server", server.httpBase, "--admin-key", "test-admin-key", "--user", "1002", "--missed",
        ])
        try await missed.expect("1001 -> 1002  cancelled  (ended by 1001: callerCancelled)")
        #expect(try await missed.finish() == 0)
        let refused = try CLIProcess([
            "calls", "--server", server.httpBase, "--admin-key", "wrong", "--user", "1001",
        ])
        try await refused.expect("401")
        #expect(try await refused.finish() != 0)
        offline.close()
        try await server.stop()
    }

    @Test func phoneShowsMissedCallsAtLoginAndHistoryOnRequest() async throws {
        let server = try await TestServer.start()
        let call = try await cancelledCall(on: server, caller: "1003", callee: "1004")
        let phone = try CLIProcess([
            "phone", "--server", "ws://127.0.0.1:\(server.port)", "--user", "1004", "--token",
            try await server.token("1004"), "--media", "none",
        ])
        try await phone.expect("missed calls: 1 in the last week")
        try await phone.expect("1003 -> 1004  cancelled")
        phone.type("history 5")
        try await phone.expect("history: 1 calls, newest first")
        try await phone.expect("history: ")
        #expect(try await server.server.calls(CallQuery(userId: "1004")).calls.map(\.callId) == [call.callId])
        phone.type("quit")
        #expect(try await phone.finish() == 0)
        try await server.stop()
    }
}

extension CallHistoryCommandLineTests {
    @Test func callsShowPrintsACallsTimeLineWithEachDevicesClock() async throws {
        let server = try await TestServer.start()
        let call = try await cancelledCall(on: server, caller: "1005", callee: "1006")
        let signal = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
        try await signal.login(token: try await server.token("1005"))
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        try await signal.report(
            CallReport(
                callId: call.callId, device: "phone-5",
                clock: ClockOffset(offsetMillis: -5_000, errorMillis: 3, samples: 2),
                events: [.init(name: "state.calling", at: now + 5_000, detail: "localVideoCall")]))
        let show = try CLIProcess([
            "calls", "show", "--server", server.httpBase, "--admin-key", "test-admin-key", call.callId,
        ])
        try await show.expect("1005 -> 1006  cancelled")
        try await show.expect("lane 1005/phone-5: clock -5000 ms ± 3 ms (2 samples)")
        try await show.expect("server        ledger.ended (cancelled, callerCancelled by 1005)")
        try await show.expect("1005/phone-5  state.calling (localVideoCall) ±3 ms")
        #expect(try await show.finish() == 0)
        let missing = try CLIProcess([
            "calls", "show", "--server", server.httpBase, "--admin-key", "test-admin-key", "no-such-call",
        ])
        try await missing.expect("404")
        #expect(try await missing.finish() != 0)
        signal.logout()
        try await server.stop()
    }
}
