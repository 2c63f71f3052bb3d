import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `/healthz`, `/metrics` and `POST /v1/tokens` over real HTTP.
@Suite struct HTTPEndpointTests {
    func request(_ url: String, method: String = "GET", headers: [String: String] = [:], body: String? = nil)
        async throws -> (Int, String)
    {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body.map { Data($0.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test func healthAndMetrics() async throws {
        let server = try await TestServer.start()
        let alice = try await server.loggedIn("1001")
        let bob = try await server.loggedIn("1002")
        alice.send(.send(.init(id: 1, to: "1002", body: "x")))
        _ = try await bob.frame()
        _ = try await alice.frame()
        let (status, health) = try await request("\(server.httpBase)/healthz")
        #expect(status == 200)
        #expect(health == "{\"status\":\"ok\",\"sessions\":2,\"usersOnline\":2}")
        let (_, metrics) = try await request("\(server.httpBase)/metrics")
        #expect(metrics.contains("callapi_users_online 2"))
        #expect(metrics.contains("callapi_messages_relayed_total 1"))
        #expect(metrics.contains("callapi_answers_total{result=\"delivered\",reason=\"\"} 1"))
        #expect(metrics.contains("callapi_relay_latency_seconds_count 1"))
        try await server.stop()
    }

    @Test func tokenEndpointNeedsTheAdminKey() async throws {
        let server = try await TestServer.start(adminKey: "the-admin-key")
        let url = "\(server.httpBase)/v1/tokens"
        let (denied, _) = try await request(url, method: "POST", body: "{\"userId\":\"1001\"}")
        #expect(denied == 401)
        let (wrong, _) = try await request(
            url, method: "POST", headers: ["Authorization": "Bearer nope"], body: "{\"userId\":\"1001\"}")
        #expect(wrong == 401)
        let headers = ["Authorization": "Bearer the-admin-key", "Content-Type": "application/json"]
        let (bad, badBody) = try await request(url, method: "POST", headers: headers, body: "{\"user\":1}")
        #expect(bad == 400 && badBody.contains("userId"))
        let (ok, body) = try await request(
            url, method: "POST", headers: headers, body: "{\"userId\":\"1001\",\"ttl\":60}")
        #expect(ok == 200)
        let issued = try JSONDecoder().decode(IssuedToken.self, from: Data(body.utf8))
        let socket = RawSocket(url: server.url)
        #expect(try await socket.login(issued.token).userId == "1001")
        try await server.stop()
    }

    @Test func tokenEndpointIsDisabledWithoutAnAdminKey() async throws {
        let server = try await TestServer.start(adminKey: nil)
        let (status, _) = try await request(
            "\(server.httpBase)/v1/tokens", method: "POST", headers: ["Authorization": "Bearer x"],
            body: "{\"userId\":\"1001\"}")
        #expect(status == 403)
        try await server.stop()
    }
}
