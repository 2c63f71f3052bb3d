import CallAPI
import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import CallAPITesting
import Foundation
import Testing

/// Both sides of a call on one time line (docs/timeline.md): each endpoint's `CallReporter` reports the call to the
/// real server, one of them on a clock 5 s ahead of the server's, and the server's merge puts both devices' marks
/// where they happened, within their error bars.
@Suite struct CallTimelineEndToEndTests {
    let world = SimulatedRTCWorld(clock: SystemCallClock())

    /// What a reporter sent, awaited by the test.
    final class Sent: Sendable {
        private let reports: AsyncStream<(CallReport, String?)>
        let callback: @Sendable (CallReport, (any Error)?) -> Void
        init() {
            let (stream, continuation) = AsyncStream.makeStream(of: (CallReport, String?).self)
            reports = stream
            callback = { report, error in continuation.yield((report, error.map { "\($0)" })) }
        }
        func next() async throws -> CallReport {
            for await (report, error) in reports {
                if let error { throw TimedOutOrRefused(what: "report refused: \(error)") }
                return report
            }
            throw TimedOutOrRefused(what: "no report")
        }
    }

    struct TimedOutOrRefused: Error { let what: String }

    @Test func theCalleesClockFiveSecondsAheadIsCorrectedOnTheMergedTimeLine() async throws {
        let server = try await TestServer.start()
        let ahead: Int64 = 5_000
        let wallClock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
        let callerSignal = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
        let calleeSignal = SignalClient(configuration: .init(url: server.url), logger: quietLogger) {
            wallClock() + ahead
        }
        try await callerSignal.login(token: try await server.token("1001"))
        try await calleeSignal.login(token: try await server.token("1002"))
        let caller = try await CallEndpoint.prepared(1001, signal: callerSignal, world: world)
        let callee = try await CallEndpoint.prepared(1002, signal: calleeSignal, world: world)
        let (callerSent, calleeSent) = (Sent(), Sent())
        let callerReporter = CallReporter(api: caller.api, signal: callerSignal, onSent: callerSent.callback)
        let calleeReporter = CallReporter(api: callee.api, signal: calleeSignal, onSent: calleeSent.callback)
        caller.api.addListener(listener: callerReporter)
        callee.api.addListener(listener: calleeReporter)

        try await caller.api.call(remoteUserId: 1002, callType: .video)
        try await callee.reaches(.calling)
        let callId = caller.api.getCallId()
        try await callee.api.accept(remoteUserId: 1001)
        try await caller.reaches(.connected)
        try await callee.reaches(.connected)
        try await caller.api.hangup(remoteUserId: 1002)
        let (callerReport, calleeReport) = (try await callerSent.next(), try await calleeSent.next())
        #expect(callerReport.callId == callId && calleeReport.callId == callId)
        #expect(
            abs(calleeReport.clock.offsetMillis + ahead) <= calleeReport.clock.errorMillis + 1, "\(calleeReport.clock)")

        let (status, body) = try await server.admin("GET", "/v1/calls/\(callId)/timeline")
        #expect(status == 200, "\(body)")
        let timeline = try JSONDecoder().decode(CallTimeline.self, from: Data(body.utf8))
        let record = try #require(timeline.record)
        let calleeLane = "1002/\(callee.api.deviceId)"
        let callerLane = "1001/\(caller.api.deviceId)"
        #expect(timeline.lanes.map(\.name) == ["server", callerLane, calleeLane])
        func mark(_ lane: String, _ name: String) throws -> CallTimeline.Entry {
            try #require(timeline.entries.first { $0.lane == lane && $0.name == name }, "\(lane) \(name)")
        }
        // The callee accepted before the server relayed its accept, and after the server relayed the call: on the
        // server's clock, within the callee's error bar. Unmerged, its clock would put the accept 5 s late.
        let accepted = try mark(calleeLane, "event.localAccepted")
        let acceptedAt = try #require(record.acceptedAt)
        let rangAt = try #require(record.rangAt)
        #expect(accepted.at - accepted.errorMillis <= acceptedAt, "\(accepted) vs ledger \(acceptedAt)")
        #expect(accepted.at + accepted.errorMillis >= rangAt, "\(accepted) vs ledger rang \(rangAt)")
        // The caller heard the accept after the callee sent it, both error bars allowed.
        let heard = try mark(callerLane, "event.remoteAccepted")
        #expect(heard.at + heard.errorMillis + accepted.errorMillis >= accepted.at)
        #expect(timeline.entries.map(\.at) == timeline.entries.map(\.at).sorted())
        #expect(timeline.stages.contains { $0.lane == calleeLane && $0.stage == .ringToAnswer })
        #expect(timeline.stages.contains { $0.lane == callerLane && $0.stage == .acceptToConnected })

        // The stages' histograms counted both reports.
        let metrics = server.server.metricsText()
        #expect(metrics.contains("callapi_call_stage_seconds_count{stage=\"acceptToConnected\"} 2"), "\(metrics)")
        #expect(metrics.contains("callapi_call_stage_seconds_count{stage=\"ringToAnswer\"} 1"))

        withExtendedLifetime((callerReporter, calleeReporter)) {}
        await caller.close()
        await callee.close()
        try await server.stop()
    }

    @Test func aReportFromSomeoneOutsideTheCallIsKeptButLeftOffItsTimeLineAndBadReportsAreRefused() async throws {
        let server = try await TestServer.start()
        let signal = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
        try await signal.login(token: try await server.token("1003"))
        let clock = try #require(await signal.clockOffset)
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        let bad = CallReport(
            callId: "c-1", device: "bad device", clock: clock, events: [.init(name: "state.calling", at: now)])
        await #expect(throws: SignalClientError.self) { try await signal.report(bad) }
        let farAway = CallReport(
            callId: "c-1", device: "d1", clock: clock, events: [.init(name: "state.calling", at: now + 2 * 86_400_000)])
        await #expect(throws: SignalClientError.self) { try await signal.report(farAway) }
        let fine = CallReport(
            callId: "c-1", device: "d1", clock: clock, events: [.init(name: "state.calling", at: now)])
        try await signal.report(fine)
        // No record yet: the report is the call's only trace, shown as it is.
        let (status, body) = try await server.admin("GET", "/v1/calls/c-1/timeline")
        #expect(status == 200, "\(body)")
        let timeline = try JSONDecoder().decode(CallTimeline.self, from: Data(body.utf8))
        #expect(timeline.record == nil && timeline.lanes.map(\.name) == ["1003/d1"])
        let (missing, _) = try await server.admin("GET", "/v1/calls/nothing/timeline")
        #expect(missing == 404)
        signal.logout()
        try await server.stop()
    }
}
