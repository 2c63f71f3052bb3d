import CallAPIServerCore
import CallAPISignalProtocol
import Hummingbird
import NIOCore

/// The operator console (docs/console.md), behind the admin key given once in a login form (never in a URL): who is
/// online with their devices, the calls in progress, call history with filters, and a page per call with both
/// sides on one time line (docs/timeline.md). Server-rendered HTML with no script; the overview reloads itself.
///
/// - `GET /console/login`, `POST /console/login` (form field `key`) → a cookie, `POST /console/logout`
/// - `GET /console?user=U&outcome=missed,busy` — the overview
/// - `GET /console/calls/{callId}` — one call
struct ConsoleEndpoint: Sendable {
    let hub: SignalHub
    let ledger: CallLedger?
    let pushes: PushLog
    let adminKey: String?
    let clock: any SignalServerClock

    /// How many calls the overview lists.
    static let listedCalls = 50
    /// The longest login form body.
    static let maxFormBytes = 4096

    func register(on router: Router<BasicRequestContext>) {
        router.get("/console/login") { _, _ -> Response in
            try guardEnabled()
            return html(.ok, ConsoleHTML.page(title: "log in", body: Self.loginForm(problem: nil), loggedIn: false))
        }
        router.post("/console/login") { request, _ -> Response in
            let session = try guardEnabled()
            let body = try await request.body.collect(upTo: Self.maxFormBytes)
            let key = Self.formField("key", in: String(buffer: body)) ?? ""
            guard constantTimeEquals(key, session.adminKey) else {
                return html(
                    .unauthorized,
                    ConsoleHTML.page(
                        title: "log in", body: Self.loginForm(problem: "That is not the admin key."), loggedIn: false))
            }
            let cookie =
                "\(ConsoleSession.cookie)=\(session.token(now: clock.nowMillis())); Path=/console; HttpOnly; "
                + "SameSite=Strict; Max-Age=\(ConsoleSession.lifetimeMillis / 1000)"
            return Response(status: .seeOther, headers: [.location: "/console", .setCookie: cookie])
        }
        router.post("/console/logout") { _, _ -> Response in
            Response(
                status: .seeOther,
                headers: [
                    .location: "/console/login",
                    .setCookie: "\(ConsoleSession.cookie)=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0",
                ])
        }
        router.get("/console") { request, _ -> Response in
            if let redirect = try loginNeeded(request) { return redirect }
            return html(.ok, ConsoleHTML.page(title: "overview", body: try await overview(request), refreshSeconds: 5))
        }
        router.get("/console/calls/:call") { request, context -> Response in
            if let redirect = try loginNeeded(request) { return redirect }
            guard let ledger else {
                throw HTTPError(.notFound, message: "the call ledger is off on this server (--ledger)")
            }
            guard let callId = context.parameters.get("call"), !callId.isEmpty, callId.utf8.count <= 128 else {
                throw HTTPError(.badRequest, message: "the call id must be 1-128 characters")
            }
            let found = try await ledger.timeline(callId: callId)
            guard found.record != nil || !found.reports.isEmpty else {
                throw HTTPError(.notFound, message: "the ledger has no call \(callId)")
            }
            let timeline = CallTimeline(callId: callId, record: found.record, reports: found.reports)
            var webhooks: [StoredCallEvent]?
            if let queue = ledger.webhooks { webhooks = try await queue.store.webhookEvents(callId: callId) }
            let live = ledger.liveCallSnapshots.contains { $0.callId == callId }
            return html(
                .ok,
                ConsoleHTML.page(
                    title: "call \(callId)",
                    body: ConsoleCallPage.body(timeline, webhooks: webhooks, pushes: pushes.attempts(callId: callId)),
                    refreshSeconds: live ? 5 : nil))
        }
    }

    /// The session checker, or 403 when the server has no admin key.
    @discardableResult
    private func guardEnabled() throws -> ConsoleSession {
        guard let adminKey else {
            throw HTTPError(.forbidden, message: "the console is disabled: start the server with --admin-key")
        }
        return ConsoleSession(adminKey: adminKey)
    }

    /// A redirect to the login form when the request carries no valid console cookie.
    private func loginNeeded(_ request: Request) throws -> Response? {
        let session = try guardEnabled()
        if let token = ConsoleSession.token(inCookieHeaders: request.headers[values: .cookie]),
            session.isValid(token, now: clock.nowMillis())
        {
            return nil
        }
        return Response(status: .seeOther, headers: [.location: "/console/login"])
    }

    private func html(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func loginForm(problem: String?) -> String {
        let warning = problem.map { "<p class=\"bad\">\(ConsoleHTML.escaped($0))</p>" } ?? ""
        return """
            \(warning)<form method="post" action="/console/login">
            <label>Admin key <input type="password" name="key" autocomplete="current-password" autofocus></label>
            <button>Log in</button></form>
            """
    }

    /// The value of `name` in an `application/x-www-form-urlencoded` body.
    static func formField(_ name: String, in body: String) -> String? {
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name else { continue }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        return nil
    }

    private func overview(_ request: Request) async throws -> String {
        var html = "<h2>Online now</h2><table><tr><th>user</th><th>push devices</th></tr>"
        let registry = hub.devices
        for user in hub.onlineUsers {
            let devices = registry.devices(of: user).map { "\($0.device.deviceId) (\($0.device.platform.rawValue))" }
            html +=
                "<tr><td>\(ConsoleHTML.escaped(user))</td>"
                + "<td>\(ConsoleHTML.escaped(devices.isEmpty ? "none registered" : devices.joined(separator: ", ")))</td></tr>"
        }
        html += "</table>"
        guard let ledger else { return html + "<p class=\"na\">The call ledger is off on this server (--ledger).</p>" }
        html +=
            "<h2>Calls in progress</h2><table><tr><th>call</th><th>caller → callee</th><th>media</th><th>since</th>"
            + "<th>state</th></tr>"
        for call in ledger.liveCallSnapshots.sorted(by: { $0.startedAt > $1.startedAt }) {
            let state = call.acceptedAt != nil ? "accepted" : (call.rangAt != nil ? "ringing" : "held for the callee")
            html +=
                "<tr><td>\(Self.callLink(call.callId))</td><td>\(ConsoleHTML.escaped(call.caller)) → "
                + "\(ConsoleHTML.escaped(call.callee))</td><td>\(call.media.rawValue)</td>"
                + "<td>\(ConsoleHTML.time(call.startedAt))</td><td>\(state)</td></tr>"
        }
        html += "</table>"
        let parameters = request.uri.queryParameters
        let user = parameters["user"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        let outcomeText = parameters["outcome"].map(String.init) ?? ""
        var outcomes: [CallOutcome] = []
        for name in outcomeText.split(separator: ",") where !name.isEmpty {
            guard let outcome = CallOutcome(rawValue: String(name)) else {
                throw HTTPError(.badRequest, message: "\"outcome\": \(name) is not a call outcome")
            }
            outcomes.append(outcome)
        }
        let calls: [CallRecord]
        if let user {
            guard SignalProtocol.isValidUserId(user) else {
                throw HTTPError(.badRequest, message: "the user id must be 1-64 characters of A-Z a-z 0-9 . _ -")
            }
            calls = try await ledger.calls(CallQuery(userId: user, outcomes: outcomes, limit: Self.listedCalls)).calls
        } else {
            calls = try await ledger.recentCalls(outcomes: outcomes, limit: Self.listedCalls)
        }
        html += """
            <h2>Calls</h2><form method="get" action="/console">
            <label>user <input name="user" value="\(ConsoleHTML.escaped(user ?? ""))"></label>
            <label>outcomes <input name="outcome" value="\(ConsoleHTML.escaped(outcomeText))" \
            placeholder="missed,busy"></label> <button>Filter</button></form>
            <table><tr><th>started</th><th>call</th><th>media</th><th>caller → callee</th><th>outcome</th>\
            <th>connected for</th><th>ended by</th></tr>
            """
        for record in calls {
            html +=
                "<tr><td>\(ConsoleHTML.time(record.startedAt))</td><td>\(Self.callLink(record.callId))</td>"
                + "<td>\(record.media.rawValue)</td><td>\(ConsoleHTML.escaped(record.caller)) → "
                + "\(ConsoleHTML.escaped(record.callee))</td><td>\(record.outcome.rawValue)</td>"
                + "<td>\(record.durationMillis > 0 ? ConsoleHTML.seconds(record.durationMillis) : "")</td>"
                + "<td>\(ConsoleHTML.escaped((record.endedBy.map { "\($0): " } ?? "") + record.endReason))</td></tr>"
        }
        return html + "</table>"
    }

    static func callLink(_ callId: String) -> String {
        "<a href=\"/console/calls/\(ConsoleHTML.component(callId))\"><code>\(ConsoleHTML.escaped(callId))</code></a>"
    }
}
