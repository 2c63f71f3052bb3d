import CallAPIServerTesting
import CallAPISignalProtocol
import Foundation
import Synchronization
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// Every outcome the ledger records, for calls between real sockets on a real server, written as the deployed
/// clients write them (docs/spec/wire-format.md: the Web client sends no messageId; multi-device clients add a
/// deviceId). Each scenario runs on SQLite and, where `.ci/run` started it, PostgreSQL.
struct LedgerCall {
    let server: TestServer
    let caller: String
    let callee: String
    let callId = UUID().uuidString
    private let requestIds = RequestCounter()

    /// A wire-format-1.0 message of this call.
    func body(_ action: Int, from user: String, callId: String? = nil, _ extra: String = "") -> String {
        "{\"message_action\":\(action),\"message_version\":\"1.0\",\"message_timestamp\":\(Int64(Date().timeIntervalSince1970 * 1000)),"
            + "\"fromUserId\":\(user),\"callId\":\"\(callId ?? self.callId)\"\(extra)}"
    }

    /// Sends `body` from `socket` to `to` and returns the server's answer.
    @discardableResult
    func send(_ body: String, on socket: RawSocket, to: String) async throws -> ServerFrame.Answer {
        let id = requestIds.next()
        socket.send(.send(.init(id: id, to: to, body: body)))
        let frame = try await socket.frame { if case .answer(let answer) = $0 { answer.id == id } else { false } }
        guard case .answer(let answer) = frame else { throw UnexpectedFrame(frame: frame) }
        return answer
    }

    @discardableResult
    func call(on socket: RawSocket, audio: Bool = false) async throws -> ServerFrame.Answer {
        try await send(
            body(audio ? 10 : 0, from: caller, ",\"remoteUserId\":\(callee),\"fromRoomId\":\"room-\(caller)\""),
            on: socket, to: callee)
    }

    /// The ledger's record of this call (every call that ended before asking is written).
    func record() async throws -> CallRecord? {
        try await server.server.calls(CallQuery(userId: caller, limit: 200)).calls.first { $0.callId == callId }
    }
}

final class RequestCounter: Sendable {
    private let value = Mutex(10)
    func next() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
}

enum LedgerEndToEndScenarios {
    static func start(
        _ backend: LedgerBackend, clock: TestClock? = nil, fresh: Bool = false,
        configure: (inout LedgerSettings) -> Void = { _ in }
    ) async throws -> TestServer {
        var ledger = LedgerSettings()
        ledger.database = fresh ? try await backend.freshDatabase() : backend.database
        // Retention deletes every old call in its database; only the retention test, on a database of its own, has it.
        ledger.retentionDays = nil
        configure(&ledger)
        return try await TestServer.start(clock: clock ?? TestClock(1_800_000_000_000)) { $0.ledger = ledger }
    }

    static func completed(_ backend: LedgerBackend) async throws {
        let clock = TestClock()
        let server = try await start(backend, clock: clock)
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let a = try await server.loggedIn(call.caller)
        let b = try await server.loggedIn(call.callee)
        #expect(try await call.call(on: a).result == .delivered)
        clock.advance(seconds: 2)
        try await call.send(call.body(2, from: call.callee), on: b, to: call.caller)
        clock.advance(seconds: 65)
        try await call.send(call.body(4, from: call.callee, ",\"hangupReason\":\"bye\""), on: b, to: call.caller)
        let record = try #require(try await call.record())
        #expect(record.outcome == .completed)
        #expect(record.media == .video)
        #expect(record.durationMillis == 65_000)
        #expect(record.endedBy == call.callee)
        #expect(record.endReason == "bye")
        #expect(record.roomId == "room-\(call.caller)")
        #expect(record.rangAt == record.startedAt)
        #expect(record.acceptedAt == record.startedAt + 2000)
        #expect(record.devices.map(\.userId) == [call.caller, call.callee])
        try await server.stop()
    }

    static func missedByRingTimer(_ backend: LedgerBackend) async throws {
        let server = try await start(backend)
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let a = try await server.loggedIn(call.caller)
        let b = try await server.loggedIn(call.callee)
        try await call.call(on: a, audio: true)
        try await call.send(call.body(1, from: call.caller, ",\"cancelCallByInternal\":1"), on: a, to: call.callee)
        let record = try #require(try await call.record())
        #expect(record.outcome == .missed)
        #expect(record.endReason == "callerTimeout")
        #expect(record.media == .audio)
        let missed = try await server.server.calls(.missed(userId: call.callee, since: nil))
        #expect(missed.calls.map(\.callId) == [call.callId])
        b.close()
        try await server.stop()
    }

    static func missedCalleeOffline(_ backend: LedgerBackend) async throws {
        let server = try await start(backend)
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let a = try await server.loggedIn(call.caller)
        #expect(try await call.call(on: a).reason == .peerOffline)
        let record = try #require(try await call.record())
        #expect(record.outcome == .missed)
        #expect(record.endReason == "calleeOffline")
        #expect(record.rangAt == nil)
        try await server.stop()
    }

    /// The shutdown sequence (SignalServer's parts): the sessions are drained, then the ledger writes what ended,
    /// then the server stops. A call rejected just before the shutdown (not yet written: the writer gathers calls
    /// for a moment) is listed by a server started on the same database afterwards.
    static func endedJustBeforeAShutdown(_ backend: LedgerBackend) async throws {
        let database: LedgerSettings.Database =
            switch backend {
            case .sqlite:
                .sqlite(
                    path: FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(uniqueUser()).sqlite")
                        .path)
            case .postgres: backend.database
            }
        func start() async throws -> TestServer {
            try await TestServer.start(clock: TestClock(1_800_000_000_000)) {
                $0.ledger.database = database
                $0.ledger.retentionDays = nil
            }
        }
        let first = try await start()
        let call = LedgerCall(server: first, caller: uniqueUser(), callee: uniqueUser())
        let a = try await first.loggedIn(call.caller)
        let b = try await first.loggedIn(call.callee)
        try await call.call(on: a)
        try await call.send(call.body(3, from: call.callee, ",\"rejectByInternal\":0"), on: b, to: call.caller)
        try await first.stop()
        let second = try await start()
        let page = try await second.server.calls(CallQuery(userId: call.caller, limit: 200))
        #expect(page.calls.first { $0.callId == call.callId }?.outcome == .rejected)
        try await second.stop()
    }

    static func rejected(_ backend: LedgerBackend) async throws {
        let server = try await start(backend)
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let a = try await server.loggedIn(call.caller)
        let b = try await server.loggedIn(call.callee)
        try await call.call(on: a)
        try await call.send(
            call.body(3, from: call.callee, ",\"rejectReason\":\"in a meeting\",\"rejectByInternal\":0"), on: b,
            to: call.caller)
        let record = try #require(try await call.record())
        #expect(record.outcome == .rejected)
        #expect(record.endedBy == call.callee)
        try await server.stop()
    }

    static func busyByTheCalleesClient(_ backend: LedgerBackend) async throws {
        let server = try await start(backend)
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let a = try await server.loggedIn(call.caller)
        let b = try await server.loggedIn(call.callee)
        try await call.call(on: a)
        // The deployed clients stamp the busy reject with their own current call's id.
        try await call.send(
            call.body(
                3, from: call.callee, callId: "their-own-call",
                ",\"rejectReason\":\"The user is currently busy\",\"rejectByInternal\":1"), on: b, to: call.caller)
        let record = try #require(try await call.record())
        #expect(record.outcome == .busy)
        #expect(record.endReason == "calleeBusy")
        try await server.stop()
    }

    static func busyAnsweredByTheServer(_ backend: LedgerBackend) async throws {
        let server = try await start(backend) { $0.answersBusy = true }
        let first = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let a = try await server.loggedIn(first.caller)
        let b = try await server.loggedIn(first.callee)
        try await first.call(on: a)
        try await first.send(first.body(2, from: first.callee), on: b, to: first.caller)
        let second = LedgerCall(server: server, caller: uniqueUser(), callee: first.callee)
        let c = try await server.loggedIn(second.caller)
        #expect(try await second.call(on: c).result == .delivered)
        let frame = try await c.frame { if case .message = $0 { true } else { false } }
        guard case .message(let reject) = frame else { throw UnexpectedFrame(frame: frame) }
        #expect(reject.from == first.callee)
        #expect(reject.body.contains("\"rejectByInternal\":1"))
        #expect(reject.body.contains("\"callId\":\"\(second.callId)\""))
        #expect(reject.body.contains("The user is currently busy"))
        let record = try #require(try await second.record())
        #expect(record.outcome == .busy)
        #expect(record.endReason == "serverBusy")
        // The busy callee never saw the second call.
        try await first.send(first.body(4, from: first.caller), on: a, to: first.callee)
        let next = try await b.frame { if case .message = $0 { true } else { false } }
        guard case .message(let hangup) = next else { throw UnexpectedFrame(frame: next) }
        #expect(hangup.body.contains("\"message_action\":4"))
        try await server.stop()
    }

    static func cancelled(_ backend: LedgerBackend) async throws {
        let server = try await start(backend)
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let a = try await server.loggedIn(call.caller)
        let b = try await server.loggedIn(call.callee)
        try await call.call(on: a)
        try await call.send(call.body(1, from: call.caller, ",\"cancelCallByInternal\":0"), on: a, to: call.callee)
        let record = try #require(try await call.record())
        #expect(record.outcome == .cancelled)
        #expect(record.endedBy == call.caller)
        // A callee's missed calls include calls cancelled while they rang.
        #expect(try await server.server.calls(.missed(userId: call.callee, since: nil)).calls.count == 1)
        b.close()
        try await server.stop()
    }

    /// A call held and pushed to an offline callee, withdrawn before the callee logs in: the ledger records what
    /// the withdrawing cancel says (cancelled by the caller, or missed when the caller's ring timer ran out).
    static func withdrawnHeldCall(_ backend: LedgerBackend, reason: PushMark.Reason) async throws {
        let server = try await start(backend)
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let b = try await server.loggedIn(call.callee)
        b.send(
            .registerDevice(
                .init(
                    id: 2,
                    device: PushDevice(
                        deviceId: "phone", platform: .apns, kind: .voip, token: String(repeating: "cd", count: 32),
                        topic: "com.example.app", environment: .sandbox))))
        _ = try await b.frame { if case .devices = $0 { true } else { false } }
        b.close()
        try await withTimeout(5, "the callee to be offline") {
            while await server.server.onlineUsers.contains(call.callee) { try await Task.sleep(for: .milliseconds(5)) }
        }
        let a = try await server.loggedIn(call.caller)
        let body = call.body(0, from: call.caller, ",\"remoteUserId\":\(call.callee),\"fromRoomId\":\"room\"")
        a.send(
            .send(
                .init(
                    id: 3, to: call.callee, body: body, push: .call(callId: call.callId, callerName: nil, video: true)))
        )
        let held = try await a.frame { if case .answer(let answer) = $0 { answer.id == 3 } else { false } }
        guard case .answer(let heldAnswer) = held else { throw UnexpectedFrame(frame: held) }
        #expect(heldAnswer.result == .queued)
        let byTimer = reason == .expired ? 1 : 0
        a.send(
            .send(
                .init(
                    id: 4, to: call.callee,
                    body: call.body(1, from: call.caller, ",\"cancelCallByInternal\":\(byTimer)"),
                    push: .withdraw(callId: call.callId, reason: reason))))
        let withdrawn = try await a.frame { if case .answer(let answer) = $0 { answer.id == 4 } else { false } }
        guard case .answer(let answer) = withdrawn else { throw UnexpectedFrame(frame: withdrawn) }
        #expect(answer.result == .queued)
        let record = try #require(try await call.record())
        #expect(record.outcome == (reason == .cancelled ? .cancelled : .missed))
        #expect(record.endReason == (reason == .cancelled ? "callerCancelled" : "callerTimeout"))
        #expect(record.endedBy == call.caller)
        #expect(record.rangAt == nil)
        try await server.stop()
    }

    static func failed(_ backend: LedgerBackend) async throws {
        let server = try await start(backend)
        // 65 characters: longer than a user id may be.
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: String(repeating: "7", count: 65))
        let a = try await server.loggedIn(call.caller)
        #expect(try await call.call(on: a).reason == .invalidTarget)
        let record = try #require(try await call.record())
        #expect(record.outcome == .failed)
        #expect(record.endReason == "notDelivered:invalid_target")
        try await server.stop()
    }

    static func answeredElsewhere(_ backend: LedgerBackend) async throws {
        let server = try await start(backend)
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let a = try await server.loggedIn(call.caller)
        let phone = try await server.loggedIn(call.callee)
        let tablet = try await server.loggedIn(call.callee)
        #expect(try await call.call(on: a).sessions == 2)
        try await call.send(call.body(2, from: call.callee, ",\"deviceId\":\"tablet\""), on: tablet, to: call.caller)
        // The phone's accept comes second: it lost the race.
        try await call.send(call.body(2, from: call.callee, ",\"deviceId\":\"phone\""), on: phone, to: call.caller)
        try await call.send(call.body(4, from: call.caller), on: a, to: call.callee)
        let record = try #require(try await call.record())
        #expect(record.outcome == .completed)
        let callee = record.devices.filter { $0.userId == call.callee }
        #expect(callee.count == 2)
        #expect(callee.first { $0.deviceId == "tablet" }?.ending == "completed")
        #expect(callee.first { $0.deviceId == "phone" }?.ending == "answeredElsewhere")
        try await server.stop()
    }

    static func dropped(_ backend: LedgerBackend) async throws {
        let clock = TestClock()
        let server = try await start(backend, clock: clock)
        let call = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let watcher = try await server.loggedIn(uniqueUser())
        watcher.send(.subscribe(.init(id: 2)))
        _ = try await watcher.frame { if case .presence = $0 { true } else { false } }
        let a = try await server.loggedIn(call.caller)
        let b = try await server.loggedIn(call.callee)
        try await call.call(on: a)
        try await call.send(call.body(2, from: call.callee), on: b, to: call.caller)
        // Both clients crash: their sockets are lost without a hangup.
        a.abort()
        b.abort()
        for _ in 0..<2 {
            _ = try await watcher.frame(timeout: 10) {
                if case .presenceChanged(let change) = $0 { !change.online } else { false }
            }
        }
        clock.advance(seconds: 29)
        await server.tick()
        #expect(try await call.record() == nil)
        clock.advance(seconds: 2)
        await server.tick()
        let record = try #require(try await call.record())
        #expect(record.outcome == .dropped)
        #expect(record.endReason == "participantsGone")
        #expect(record.endedBy == nil)
        try await server.stop()
    }

    static func retention(_ backend: LedgerBackend) async throws {
        let clock = TestClock(1_000_000_000_000)
        let server = try await start(backend, clock: clock, fresh: true) { $0.retentionDays = 7 }
        let old = LedgerCall(server: server, caller: uniqueUser(), callee: uniqueUser())
        let a = RawSocket(url: server.url)
        try await a.login(try await server.token(old.caller, ttl: 30 * 86_400))
        try await old.call(on: a)
        try await old.send(old.body(1, from: old.caller), on: a, to: old.callee)
        clock.advance(seconds: 6 * 86_400)
        let recent = LedgerCall(server: server, caller: old.caller, callee: uniqueUser())
        try await recent.call(on: a)
        try await recent.send(recent.body(1, from: recent.caller), on: a, to: recent.callee)
        #expect(try await server.server.calls(CallQuery(userId: old.caller)).calls.count == 2)
        clock.advance(seconds: 2 * 86_400)
        #expect(await server.server.applyLedgerRetention() == 1)
        let left = try await server.server.calls(CallQuery(userId: old.caller)).calls
        #expect(left.map(\.callId) == [recent.callId])
        try await server.stop()
    }
}

@Suite struct SQLiteLedgerEndToEndTests {
    @Test func aWithdrawnHeldCallIsCancelled() async throws {
        try await LedgerEndToEndScenarios.withdrawnHeldCall(.sqlite, reason: .cancelled)
    }
    @Test func aHeldCallWithdrawnByTheRingTimerIsMissed() async throws {
        try await LedgerEndToEndScenarios.withdrawnHeldCall(.sqlite, reason: .expired)
    }
    @Test func completed() async throws { try await LedgerEndToEndScenarios.completed(.sqlite) }
    @Test func missedByRingTimer() async throws { try await LedgerEndToEndScenarios.missedByRingTimer(.sqlite) }
    @Test func missedCalleeOffline() async throws { try await LedgerEndToEndScenarios.missedCalleeOffline(.sqlite) }
    @Test func rejected() async throws { try await LedgerEndToEndScenarios.rejected(.sqlite) }
    @Test func aCallThatEndedJustBeforeAShutdownIsWritten() async throws {
        try await LedgerEndToEndScenarios.endedJustBeforeAShutdown(.sqlite)
    }
    @Test func busyByTheCalleesClient() async throws {
        try await LedgerEndToEndScenarios.busyByTheCalleesClient(.sqlite)
    }
    @Test func busyAnsweredByTheServer() async throws {
        try await LedgerEndToEndScenarios.busyAnsweredByTheServer(.sqlite)
    }
    @Test func cancelled() async throws { try await LedgerEndToEndScenarios.cancelled(.sqlite) }
    @Test func failed() async throws { try await LedgerEndToEndScenarios.failed(.sqlite) }
    @Test func answeredElsewhere() async throws { try await LedgerEndToEndScenarios.answeredElsewhere(.sqlite) }
    @Test func dropped() async throws { try await LedgerEndToEndScenarios.dropped(.sqlite) }
    @Test func retention() async throws { try await LedgerEndToEndScenarios.retention(.sqlite) }
}

@Suite(.enabled(if: LedgerBackend.postgresURL != nil, LedgerBackend.postgresMissing))
struct PostgresLedgerEndToEndTests {
    @Test func aWithdrawnHeldCallIsCancelled() async throws {
        try await LedgerEndToEndScenarios.withdrawnHeldCall(.postgres, reason: .cancelled)
    }
    @Test func aHeldCallWithdrawnByTheRingTimerIsMissed() async throws {
        try await LedgerEndToEndScenarios.withdrawnHeldCall(.postgres, reason: .expired)
    }
    @Test func completed() async throws { try await LedgerEndToEndScenarios.completed(.postgres) }
    @Test func missedByRingTimer() async throws { try await LedgerEndToEndScenarios.missedByRingTimer(.postgres) }
    @Test func missedCalleeOffline() async throws { try await LedgerEndToEndScenarios.missedCalleeOffline(.postgres) }
    @Test func rejected() async throws { try await LedgerEndToEndScenarios.rejected(.postgres) }
    @Test func aCallThatEndedJustBeforeAShutdownIsWritten() async throws {
        try await LedgerEndToEndScenarios.endedJustBeforeAShutdown(.postgres)
    }
    @Test func busyByTheCalleesClient() async throws {
        try await LedgerEndToEndScenarios.busyByTheCalleesClient(.postgres)
    }
    @Test func busyAnsweredByTheServer() async throws {
        try await LedgerEndToEndScenarios.busyAnsweredByTheServer(.postgres)
    }
    @Test func cancelled() async throws { try await LedgerEndToEndScenarios.cancelled(.postgres) }
    @Test func failed() async throws { try await LedgerEndToEndScenarios.failed(.postgres) }
    @Test func answeredElsewhere() async throws { try await LedgerEndToEndScenarios.answeredElsewhere(.postgres) }
    @Test func dropped() async throws { try await LedgerEndToEndScenarios.dropped(.postgres) }
    @Test func retention() async throws { try await LedgerEndToEndScenarios.retention(.postgres) }
}
