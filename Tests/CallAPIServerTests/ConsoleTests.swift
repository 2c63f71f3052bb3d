import AsyncHTTPClient
import CallAPI
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import CallAPITesting
import Foundation
import NIOCore
import Testing

@testable import CallAPIServer
@testable import CallAPIServerCore

/// The operator console (docs/console.md) on a real server: the login keeps the admin key out of URLs, the overview
/// lists who is online and the calls, and a call's page shows both sides on one time line with the checklist.
@Suite struct ConsoleTests {
    /// One HTTP exchange, redirects not followed: the status, the `Location` and `Set-Cookie` headers, the body.
    struct Exchange {
        var status: Int
        var location: String?
        var setCookie: String?
        var body: String
    }

    static let client = HTTPClient(
        eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))

    func exchange(
        _ method: String, _ url: String, cookie: String? = nil, form: String? = nil
    ) async throws -> Exchange {
        var request = HTTPClientRequest(url: url)
        request.method = method == "POST" ? .POST : .GET
        if let cookie { request.headers.add(name: "Cookie", value: cookie) }
        if let form {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: form))
        }
        let response = try await Self.client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 4 << 20)
        return Exchange(
            status: Int(response.status.code), location: response.headers.first(name: "Location"),
            setCookie: response.headers.first(name: "Set-Cookie"), body: String(buffer: body))
    }

    /// Logs in with the admin key; the cookie to send.
    func logIn(_ server: TestServer) async throws -> String {
        let answer = try await exchange("POST", "\(server.httpBase)/console/login", form: "key=test-admin-key")
        #expect(answer.status == 303 && answer.location == "/console")
        let setCookie = answer.setCookie ?? ""
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
        return String(setCookie.split(separator: ";")[0])
    }

    @Test func theLoginTakesTheKeyFromAFormAndGivesACookieNeverPuttingTheKeyInAURL() async throws {
        let server = try await TestServer.start()
        let away = try await exchange("GET", "\(server.httpBase)/console")
        #expect(away.status == 303 && away.location == "/console/login")
        let form = try await exchange("GET", "\(server.httpBase)/console/login")
        #expect(form.status == 200 && form.body.contains("method=\"post\"") && form.body.contains("type=\"password\""))
        let wrong = try await exchange("POST", "\(server.httpBase)/console/login", form: "key=guess")
        #expect(wrong.status == 401 && wrong.body.contains("That is not the admin key.") && wrong.setCookie == nil)
        let cookie = try await logIn(server)
        #expect(!cookie.contains("test-admin-key"))
        let overview = try await exchange("GET", "\(server.httpBase)/console", cookie: cookie)
        #expect(overview.status == 200 && overview.body.contains("Online now"))
        #expect(!overview.body.contains("test-admin-key"))
        let forged = try await exchange("GET", "\(server.httpBase)/console", cookie: "callapi_console=9999999999999.00")
        #expect(forged.status == 303)
        let out = try await exchange("POST", "\(server.httpBase)/console/logout", cookie: cookie)
        #expect(out.status == 303 && out.setCookie?.contains("Max-Age=0") == true)
        try await server.stop()
    }

    @Test func theOverviewAndACallsPageShowTheCallWithBothSidesOnOneTimeLine() async throws {
        let server = try await TestServer.start()
        let world = SimulatedRTCWorld(clock: SystemCallClock())
        var endpoints: [(CallEndpoint, CallReporter)] = []
        var sent: [AsyncStream<(callId: String, error: String?)>] = []
        for user: UInt in [1001, 1002] {
            let signal = SignalClient(configuration: .init(url: server.url), logger: quietLogger)
            try await signal.login(token: try await server.token("\(user)"))
            let endpoint = try await CallEndpoint.prepared(user, signal: signal, world: world)
            let (stream, continuation) = AsyncStream.makeStream(of: (callId: String, error: String?).self)
            let reporter = CallReporter(api: endpoint.api, signal: signal) { report, error in
                continuation.yield((report.callId, error.map { "\($0)" }))
            }
            endpoint.api.addListener(listener: reporter)
            endpoints.append((endpoint, reporter))
            sent.append(stream)
        }
        let (caller, callee) = (endpoints[0].0, endpoints[1].0)
        try await caller.api.call(remoteUserId: 1002, callType: .video)
        try await callee.reaches(.calling)
        let callId = caller.api.getCallId()
        let cookie = try await logIn(server)
        let ringing = try await exchange("GET", "\(server.httpBase)/console", cookie: cookie)
        #expect(ringing.body.contains("<td>1001</td>") && ringing.body.contains("<td>1002</td>"), "online users")
        #expect(
            ringing.body.contains("Calls in progress") && ringing.body.contains(callId)
                && ringing.body.contains("ringing"))
        try await callee.api.accept(remoteUserId: 1001)
        try await caller.reaches(.connected)
        try await caller.api.hangup(remoteUserId: 1002)
        for stream in sent {
            for await outcome in stream {
                #expect(outcome.callId == callId && outcome.error == nil, "\(outcome)")
                break
            }
        }

        let overview = try await exchange(
            "GET", "\(server.httpBase)/console?user=1002&outcome=completed", cookie: cookie)
        #expect(overview.body.contains("/console/calls/\(callId)") && overview.body.contains("completed"))
        let none = try await exchange("GET", "\(server.httpBase)/console?outcome=missed", cookie: cookie)
        #expect(!none.body.contains("/console/calls/\(callId)"), "filtered out")
        let bad = try await exchange("GET", "\(server.httpBase)/console?outcome=lost", cookie: cookie)
        #expect(bad.status == 400)

        let page = try await exchange("GET", "\(server.httpBase)/console/calls/\(callId)", cookie: cookie)
        #expect(page.status == 200)
        for text in [
            "1001 → 1002", "<b>completed</b>", "ended by 1001: hangup", "<svg", "1001/\(caller.api.deviceId)",
            "1002/\(callee.api.deviceId)", "event.localAccepted", "ledger.connected", "acceptToConnected",
            "✓ connected", "✓ 1001 and 1002", "Audio freezes under 200 ms",
            "not measured: the engines sent no quality samples",
        ] {
            #expect(page.body.contains(text), "\(text)")
        }
        #expect(!page.body.contains("http-equiv=\"refresh\""), "an ended call's page does not reload")
        let missing = try await exchange("GET", "\(server.httpBase)/console/calls/nothing", cookie: cookie)
        #expect(missing.status == 404)
        withExtendedLifetime(endpoints) {}
        for (endpoint, _) in endpoints { await endpoint.close() }
        try await server.stop()
    }

    @Test func aPushedCallsPageListsItsPushAttempts() async throws {
        let setup = try await PushEndToEndTests.setUp()
        try await setup.sendCallAPI(action: 0, callId: "call-pushed-1")
        _ = try await withTimeout(5, "the push") { await setup.kit.mock.waitForPushes(1) }
        try await setup.sendCallAPI(action: 1, callId: "call-pushed-1")
        let cookie = try await logIn(setup.server)
        // The call ends in the ledger a moment after its cancel was relayed.
        let page = try await withTimeout(5, "the call's page") {
            while true {
                let page = try await exchange(
                    "GET", "\(setup.server.httpBase)/console/calls/call-pushed-1", cookie: cookie)
                if page.status == 200 { return page }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let device = PushTestKit.apnsDevice()
        let row = try #require(page.body.range(of: "<h2>Pushes</h2>").map { String(page.body[$0.upperBound...]) })
        #expect(
            row.contains("<td>1002</td><td>\(device.deviceId)</td><td>apns</td><td>1</td><td>delivered</td>"), "\(row)")
        let other = try await exchange(
            "GET", "\(setup.server.httpBase)/console/calls/call-never-pushed", cookie: cookie)
        #expect(other.status == 404)
        try await setup.stop()
    }
}

/// The checklist's quality checks against the anchors' thresholds.
@Suite struct ConsoleQualityCheckTests {
    func entry(_ lane: String, _ quality: RTCQuality) -> CallTimeline.QualityEntry {
        CallTimeline.QualityEntry(lane: lane, at: 0, errorMillis: 0, peer: 1, quality: quality)
    }

    @Test func theWorstSampleOfTheCallIsCheckedAndTheDeviceThatSawItNamed() {
        let checks = ConsoleCallPage.qualityChecks([
            entry(
                "1001/a",
                RTCQuality(
                    periodMillis: 2_000, audioLossPercent: 0, videoLossPercent: 1, roundTripMillis: 40,
                    audioFreezeMillis: 40, videoFreezeMillis: 100)),
            entry(
                "1002/b",
                RTCQuality(
                    periodMillis: 2_000, audioLossPercent: 7.5, roundTripMillis: 450, audioFreezeMillis: 250,
                    videoFreezeMillis: 500)),
        ])
        #expect(
            checks.map(\.0) == [
                "Audio freezes under 200 ms", "Video freezes under 600 ms", "Packet loss under 5 %", "RTT under 400 ms",
            ])
        #expect(
            checks.map(\.1) == [
                .bad("250 ms at 1002/b"), .ok("worst 500 ms (2 samples)"), .bad("7.5 % at 1002/b"),
                .bad("450 ms at 1002/b"),
            ])
        #expect(
            ConsoleCallPage.qualityChecks([]).allSatisfy {
                $0.1 == .notMeasured("not measured: the engines sent no quality samples")
            })
    }

    @Test func eachDirectionGetsABitrateChartWithATickWhereItLostPackets() {
        let chart = ConsoleCallPage.qualityChart([
            CallTimeline.QualityEntry(
                lane: "1001/a", at: 1_000, errorMillis: 0, peer: 1002,
                quality: RTCQuality(periodMillis: 2_000, videoLossPercent: 0, audioKbps: 64, videoKbps: 550)),
            CallTimeline.QualityEntry(
                lane: "1001/a", at: 3_000, errorMillis: 0, peer: 1002,
                quality: RTCQuality(periodMillis: 2_000, videoLossPercent: 6, audioKbps: 64, videoKbps: 300)),
            CallTimeline.QualityEntry(
                lane: "1002/b", at: 2_000, errorMillis: 0, peer: 1001,
                quality: RTCQuality(periodMillis: 2_000, audioKbps: 64, videoKbps: 580)),
        ])
        #expect(chart.components(separatedBy: "<svg").count - 1 == 2, "one chart per direction")
        #expect(chart.components(separatedBy: "<polyline").count - 1 == 4, "video and audio in each")
        #expect(chart.components(separatedBy: "stroke=\"#c62828\"").count - 1 == 1, "one period lost packets")
        #expect(chart.contains("1001/a received") && chart.contains("top 580 kbit/s"))
        #expect(ConsoleCallPage.qualityChart([]).isEmpty)
    }

}
