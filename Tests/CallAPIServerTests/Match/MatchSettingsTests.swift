import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import Testing

/// The match queue's bound and the placement window are settings (flags or `CALLAPI_*` variables), published on
/// `/metrics` like the other limits.
@Suite struct MatchSettingsTests {
    static let names = ["match-max-waiting", "place-call-window"]

    @Test func theLimitsHaveDefaultsAndCanBeSet() throws {
        let defaults = try ServerSettings.configuration(flags: [:], environment: [:]).limits.match
        #expect(defaults.maxWaiting == 10_000)
        #expect(defaults.placeWindowMillis == 5_000)
        let set = try ServerSettings.configuration(
            flags: ["match-max-waiting": "3"], environment: ["CALLAPI_PLACE_CALL_WINDOW": "9"]
        ).limits.match
        #expect(set.maxWaiting == 3)
        #expect(set.placeWindowMillis == 9_000)
        #expect(throws: ServerSettings.InvalidSetting.self) {
            try ServerSettings.configuration(flags: ["place-call-window": "0"], environment: [:])
        }
        for name in Self.names {
            #expect(ServerSettings.settings.contains { $0.name == name && $0.help.contains("default") }, "\(name)")
        }
    }

    @Test func theLimitsArePublishedAsMetrics() async throws {
        let server = try await TestServer.start()
        let text = server.server.metricsText()
        for name in Self.names {
            #expect(text.contains("callapi_limit{name=\"\(name)\"}"), "\(name)")
        }
        try await server.stop()
    }
}
