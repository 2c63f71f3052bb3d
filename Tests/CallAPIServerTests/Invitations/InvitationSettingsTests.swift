import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import Testing

/// The invitation windows are settings (flags or `CALLAPI_*` variables) with RTM v1's defaults, published on
/// `/metrics` like the other limits.
@Suite struct InvitationSettingsTests {
    static let names = ["invitation-receive-window", "invitation-expiry", "invitation-accept-window"]

    @Test func theWindowsDefaultToRTMv1sAndCanBeSet() throws {
        let defaults = try ServerSettings.configuration(flags: [:], environment: [:]).limits.invitations
        #expect(defaults.receiveWindowMillis == 30_000)
        #expect(defaults.expiryMillis == 60_000)
        #expect(defaults.acceptWindowMillis == 10_000)
        let set = try ServerSettings.configuration(
            flags: ["invitation-receive-window": "5", "invitation-expiry": "20"],
            environment: ["CALLAPI_INVITATION_ACCEPT_WINDOW": "3"]
        ).limits.invitations
        #expect(set.receiveWindowMillis == 5_000)
        #expect(set.expiryMillis == 20_000)
        #expect(set.acceptWindowMillis == 3_000)
        #expect(throws: ServerSettings.InvalidSetting.self) {
            try ServerSettings.configuration(flags: ["invitation-expiry": "0"], environment: [:])
        }
        for name in Self.names {
            #expect(ServerSettings.settings.contains { $0.name == name && $0.help.contains("default") }, "\(name)")
        }
    }

    @Test func theWindowsArePublishedAsMetrics() async throws {
        let server = try await TestServer.start()
        let text = server.server.metricsText()
        for name in Self.names {
            #expect(text.contains("callapi_limit{name=\"\(name)\"}"), "\(name)")
        }
        try await server.stop()
    }
}
