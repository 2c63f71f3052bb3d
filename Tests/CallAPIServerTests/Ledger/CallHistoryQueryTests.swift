import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import Foundation
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// History and missed calls asked for over the signaling connection (``SignalClient/callHistory``) and by an admin
/// over HTTP (`GET /v1/users/{id}/calls`), with paging, on SQLite and PostgreSQL.
enum CallHistoryQueryScenarios {
    struct Page: Decodable {
        var calls: [CallRecord]
        var nextCursor: String?
    }

    /// `caller` places 5 calls to `callee`: cancelled, missed, completed, rejected, missed (oldest first).
    static func placeCalls(on server: TestServer, clock: TestClock, caller: String, callee: String) async throws
        -> [String]
    {
        let a = try await server.loggedIn(caller)
        let b = try await server.loggedIn(callee)
        var ids: [String] = []
        for ending in ["cancel", "timeout", "complete", "reject", "timeout"] {
            let call = LedgerCall(server: server, caller: caller, callee: callee)
            try await call.call(on: a)
            switch ending {
            case "cancel": try await call.send(call.body(1, from: caller), on: a, to: callee)
            case "timeout":
                try await call.send(call.body(1, from: caller, ",\"cancelCallByInternal\":1"), on: a, to: callee)
            case "complete":
                try await call.send(call.body(2, from: callee), on: b, to: caller)
                try await call.send(call.body(4, from: caller), on: a, to: callee)
            default: try await call.send(call.body(3, from: callee), on: b, to: caller)
            }
            ids.append(call.callId)
            clock.advance(seconds: 60)
        }
        a.close()
        b.close()
        return ids
    }

    static func historyAndMissedCallsPageOverTheSignalingConnection(_ backend: LedgerBackend) async throws {
        let clock = TestClock()
        let server = try await LedgerEndToEndScenarios.start(backend, clock: clock)
        let (caller, callee) = (uniqueUser(), uniqueUser())
        let start = clock.nowMillis()
        let ids = try await placeCalls(on: server, clock: clock, caller: caller, callee: callee)
        let client = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
        try await client.login(token: try await server.token(callee))

        var history: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try await client.callHistory(limit: 2, cursor: cursor)
            history += page.calls.map(\.callId)
            cursor = page.nextCursor
            pages += 1
        } while cursor != nil && pages < 10
        #expect(pages == 3)
        #expect(history == ids.reversed())

        let missed = try await client.callHistory(missedOnly: true)
        #expect(missed.calls.map(\.callId) == [ids[4], ids[1], ids[0]])
        #expect(missed.calls.map(\.outcome) == [.missed, .missed, .cancelled])
        // Missed since a time: only the last one.
        let recent = try await client.callHistory(missedOnly: true, since: start + 3 * 60_000)
        #expect(recent.calls.map(\.callId) == [ids[4]])
        // The caller missed nothing.
        let callerClient = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
        try await callerClient.login(token: try await server.token(caller))
        #expect(try await callerClient.callHistory(missedOnly: true).calls.isEmpty)
        // A bad cursor is a clear error.
        await #expect(throws: SignalClientError.self) { _ = try await client.callHistory(cursor: "nonsense") }
        client.logout()
        callerClient.logout()
        try await server.stop()
    }

    static func adminHistoryFiltersAndPagesOverHTTP(_ backend: LedgerBackend) async throws {
        let clock = TestClock()
        let server = try await LedgerEndToEndScenarios.start(backend, clock: clock)
        let (caller, callee) = (uniqueUser(), uniqueUser())
        let start = clock.nowMillis()
        let ids = try await placeCalls(on: server, clock: clock, caller: caller, callee: callee)
        let decoder = JSONDecoder()

        let (status, body) = try await server.admin("GET", "/v1/users/\(caller)/calls?limit=3")
        #expect(status == 200)
        let first = try decoder.decode(Page.self, from: Data(body.utf8))
        #expect(first.calls.map(\.callId) == [ids[4], ids[3], ids[2]])
        let cursor = try #require(first.nextCursor)
        let (_, rest) = try await server.admin(
            "GET",
            "/v1/users/\(caller)/calls?limit=3&cursor=\(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
        )
        let second = try decoder.decode(Page.self, from: Data(rest.utf8))
        #expect(second.calls.map(\.callId) == [ids[1], ids[0]])
        #expect(second.nextCursor == nil)
        #expect(rest.contains("\"nextCursor\":null"))

        let (_, filtered) = try await server.admin(
            "GET",
            "/v1/users/\(callee)/calls?outcome=missed,rejected&role=callee&since=\(start + 60_000)&until=\(start + 4 * 60_000)"
        )
        #expect(try decoder.decode(Page.self, from: Data(filtered.utf8)).calls.map(\.callId) == [ids[3], ids[1]])

        for bad in ["outcome=lost", "limit=0", "since=yesterday", "cursor=x", "role=boss"] {
            let (code, message) = try await server.admin("GET", "/v1/users/\(caller)/calls?\(bad)")
            #expect(code == 400, "\(bad): \(message)")
        }
        #expect(try await server.admin("GET", "/v1/users/\(caller)/calls", key: "wrong").0 == 401)
        try await server.stop()
    }
}

@Suite struct SQLiteCallHistoryQueryTests {
    @Test func historyAndMissedCallsPageOverTheSignalingConnection() async throws {
        try await CallHistoryQueryScenarios.historyAndMissedCallsPageOverTheSignalingConnection(.sqlite)
    }
    @Test func adminHistoryFiltersAndPagesOverHTTP() async throws {
        try await CallHistoryQueryScenarios.adminHistoryFiltersAndPagesOverHTTP(.sqlite)
    }
    @Test func aServerWithoutTheLedgerSaysSo() async throws {
        let server = try await TestServer.start { $0.ledger.enabled = false }
        let client = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
        try await client.login(token: try await server.token("1001"))
        await #expect(throws: SignalClientError.self) { _ = try await client.callHistory() }
        #expect(try await server.admin("GET", "/v1/users/1001/calls").0 == 404)
        client.logout()
        try await server.stop()
    }
}

@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct PostgresCallHistoryQueryTests {
    @Test func historyAndMissedCallsPageOverTheSignalingConnection() async throws {
        try await CallHistoryQueryScenarios.historyAndMissedCallsPageOverTheSignalingConnection(.postgres)
    }
    @Test func adminHistoryFiltersAndPagesOverHTTP() async throws {
        try await CallHistoryQueryScenarios.adminHistoryFiltersAndPagesOverHTTP(.postgres)
    }
}
