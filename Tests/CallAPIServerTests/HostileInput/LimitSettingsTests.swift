import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import Testing

/// Every overload limit is a setting with a documented default, shown by `callapi serve --help` and published
/// on `/metrics`.
@Suite struct LimitSettingsTests {
    static let limitNames = [
        "max-held-per-sender", "max-held-bytes", "max-outbox-frames", "max-outbox-bytes", "max-refusals",
        "max-unauthenticated", "request-timeout",
    ]

    @Test func theLimitsAreSettingsWithDefaults() throws {
        let defaults = try ServerSettings.configuration(flags: [:], environment: [:]).limits
        #expect(defaults.maxHeldPerSender == 100)
        #expect(defaults.maxHeldBytes == 64 << 20)
        #expect(defaults.maxOutboxFrames == 256)
        #expect(defaults.maxOutboxBytes == 4 << 20)
        #expect(defaults.maxRefusalsInARow == 200)
        #expect(defaults.maxUnauthenticated == 1000)
        #expect(defaults.requestTimeoutMillis == 10_000)
        let set = try ServerSettings.configuration(
            flags: [
                "max-held-per-sender": "7", "max-held-bytes": "1000", "max-outbox-frames": "8",
                "max-outbox-bytes": "2048", "max-refusals": "9", "max-unauthenticated": "10",
            ],
            environment: ["CALLAPI_REQUEST_TIMEOUT": "3"]
        ).limits
        #expect(set.maxHeldPerSender == 7)
        #expect(set.maxHeldBytes == 1000)
        #expect(set.maxOutboxFrames == 8)
        #expect(set.maxOutboxBytes == 2048)
        #expect(set.maxRefusalsInARow == 9)
        #expect(set.maxUnauthenticated == 10)
        #expect(set.requestTimeoutMillis == 3000)
        #expect(throws: ServerSettings.InvalidSetting.self) {
            try ServerSettings.configuration(flags: ["max-outbox-frames": "0"], environment: [:])
        }
        for name in Self.limitNames {
            #expect(ServerSettings.settings.contains { $0.name == name && $0.help.contains("default") }, "\(name)")
        }
    }

    @Test func theLimitsArePublishedAsMetrics() async throws {
        let server = try await TestServer.start()
        let text = server.server.metricsText()
        for name in Self.limitNames + [
            "rate", "burst", "max-frame-bytes", "max-held", "channel-capacity", "channel-devices",
        ] {
            #expect(text.contains("callapi_limit{name=\"\(name)\"}"), "\(name)")
        }
        #expect(text.contains("callapi_outbox_bytes"))
        #expect(text.contains("callapi_held_bytes"))
        try await server.stop()
    }

    @Test(.enabled(if: CLIProcess.executable != nil, "needs the built callapi executable"))
    func serveHelpShowsEverySetting() async throws {
        let help = try CLIProcess(["serve", "--help"])
        for setting in ServerSettings.settings {
            try await help.expect("--\(setting.name)")
        }
        _ = try await help.finish()
    }

    /// `--event-loops` was a setting the command line did not offer while it kept its own list of options.
    @Test(.enabled(if: CLIProcess.executable != nil, "needs the built callapi executable"))
    func serveTakesEverySettingAsAFlag() async throws {
        let serve = try CLIProcess([
            "serve", "--port", "0", "--event-loops", "1", "--answer-busy", "--log-level", "error",
        ])
        try await serve.expect("listening on ws://")
        serve.interrupt()
        #expect(try await serve.finish() == 0)
    }
}
