import CallAPIServer
import CallAPIServerCore
import Foundation
import Testing

/// `callapi serve` configuration: flags over `CALLAPI_*` environment variables over development defaults.
@Suite struct ServerSettingsTests {
    @Test func argumentsAreReadAsSettingsInEveryForm() throws {
        let flags = try ServerSettings.flags(
            from: [
                "--port", "9000", "--secret=a=b", "--answer-busy", "--allow-any-channel-tokens=0", "--event-loops", "2",
            ])
        #expect(
            flags == [
                "port": "9000", "secret": "a=b", "answer-busy": "1", "allow-any-channel-tokens": "0",
                "event-loops": "2",
            ])
        let configuration = try ServerSettings.configuration(
            flags: flags.merging(["secret": String(repeating: "s", count: 32)]) { $1 }, environment: [:])
        #expect(configuration.port == 9000)
        #expect(configuration.ledger.answersBusy)
        #expect(!configuration.channels.allowAnyChannelTokens)
        #expect(configuration.eventLoops == 2)
    }

    @Test(arguments: [
        (["--bogus", "1"], "--bogus: no such setting"),
        (["--port"], "--port: give a value"),
        (["--port", "--host", "h"], "--port: give a value"),
        (["--port", "1", "--port", "2"], "--port: given twice"),
        (["9000"], "9000: expected a setting"),
    ])
    func argumentsThatAreNotSettingsAreRefusedClearly(arguments: [String], message: String) {
        #expect {
            try ServerSettings.flags(from: arguments)
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    @Test func everySettingHasAnEnvironmentVariableAndHelpWithItsDefaultOrMeaning() {
        #expect(Set(ServerSettings.settings.map(\.name)).count == ServerSettings.settings.count)
        for setting in ServerSettings.settings {
            #expect(ServerSettings.helpText.contains("--\(setting.name)"))
            #expect(ServerSettings.helpText.contains(ServerSettings.environmentName(setting.name)))
            #expect(!setting.help.isEmpty)
        }
    }

    @Test func noConfigurationRunsForDevelopment() throws {
        let configuration = try ServerSettings.configuration(flags: [:], environment: [:])
        #expect(configuration.usesDevelopmentSecret)
        #expect(configuration.adminKey == ServerSettings.developmentAdminKey)
        #expect(configuration.port == 8080 && configuration.host == "127.0.0.1")
        #expect(configuration.limits.maxFrameBytes == 65_536)
    }

    @Test func flagsWinOverTheEnvironment() throws {
        let secret = String(repeating: "s", count: 40)
        let configuration = try ServerSettings.configuration(
            flags: ["port": "9000", "rate": "5"],
            environment: [
                "CALLAPI_PORT": "7000", "CALLAPI_SECRET": secret, "CALLAPI_MAX_FRAME_BYTES": "4096",
                "CALLAPI_IDLE_TIMEOUT": "30", "CALLAPI_TOKEN_NOTICE": "120", "CALLAPI_MAX_SESSIONS": "2",
            ])
        #expect(configuration.port == 9000)
        #expect(configuration.signingKey == .hs256(secret: secret))
        #expect(configuration.adminKey == nil)  // a real secret gets no default admin key
        #expect(configuration.limits.maxFrameBytes == 4096)
        #expect(configuration.limits.ratePerSecond == 5)
        #expect(configuration.limits.idleTimeoutMillis == 30_000)
        #expect(configuration.limits.tokenNoticeMillis == 120_000)
        #expect(configuration.limits.maxSessionsPerUser == 2)
    }

    @Test(arguments: [
        ["port": "seventy"], ["port": "70000"], ["secret": "short"], ["tls-cert": "/only/one.pem"],
        ["rate": "-1"], ["es256-private-key": "/no/such/file.pem"], ["event-loops": "0"], ["event-loops": "many"],
    ])
    func badSettingsAreExplained(flags: [String: String]) {
        #expect(throws: ServerSettings.InvalidSetting.self) {
            try ServerSettings.configuration(flags: flags, environment: [:])
        }
    }

    @Test func eventLoopsDefaultToNIOsSharedGroupAndCanBeSet() throws {
        #expect(try ServerSettings.configuration(flags: [:], environment: [:]).eventLoops == nil)
        #expect(try ServerSettings.configuration(flags: ["event-loops": "1"], environment: [:]).eventLoops == 1)
        #expect(try ServerSettings.configuration(flags: [:], environment: ["CALLAPI_EVENT_LOOPS": "4"]).eventLoops == 4)
    }

    @Test func channelSettingsComeFromFlagsAndTheEnvironment() throws {
        let defaults = try ServerSettings.configuration(flags: [:], environment: [:])
        #expect(defaults.channels == ChannelSettings())
        #expect(defaults.channels.capacity == 2 && defaults.channels.watchdogSeconds == 0)
        #expect(defaults.channels.devicesPerUser == 4)
        #expect(!defaults.channels.allowAnyChannelTokens && defaults.channels.webhook == nil)
        let configuration = try ServerSettings.configuration(
            flags: ["channel-capacity": "3", "channel-watchdog": "30", "webhook-url": "http://hooks.example/callapi"],
            environment: [
                "CALLAPI_ALLOW_ANY_CHANNEL_TOKENS": "1", "CALLAPI_WEBHOOK_SECRET": "s3cret",
                "CALLAPI_CHANNEL_DEVICES": "2",
            ])
        #expect(configuration.channels.capacity == 3)
        #expect(configuration.channels.devicesPerUser == 2)
        #expect(configuration.channels.watchdogSeconds == 30)
        #expect(configuration.channels.allowAnyChannelTokens)
        #expect(
            configuration.channels.webhook == WebhookSettings(url: "http://hooks.example/callapi", secret: "s3cret"))
    }

    @Test(arguments: [
        ["channel-capacity": "0"], ["channel-devices": "0"], ["channel-devices": "17"], ["channel-watchdog": "-5"],
        ["allow-any-channel-tokens": "maybe"],
        ["webhook-url": "ftp://x"], ["webhook-secret": "alone"],
    ])
    func badChannelSettingsAreExplained(flags: [String: String]) {
        #expect(throws: ServerSettings.InvalidSetting.self) {
            try ServerSettings.configuration(flags: flags, environment: [:])
        }
    }

    @Test func iceServersAndTheTURNSecretComeFromFlagsAndAFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ice-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let secretFile = folder.appendingPathComponent("secret").path
        try "s3cret\n".write(toFile: secretFile, atomically: true, encoding: .utf8)
        let configuration = try ServerSettings.configuration(
            flags: [
                "ice-servers": "stun:198.18.1.1:3478, turn:198.18.1.1:3478?transport=tcp",
                "turn-secret-file": secretFile, "turn-credential-ttl": "600",
            ],
            environment: [:])
        // The file's line end is not part of the secret.
        #expect(
            configuration.channels.ice
                == (try ICESettings(
                    urls: ["stun:198.18.1.1:3478", "turn:198.18.1.1:3478?transport=tcp"], turnSecret: "s3cret",
                    credentialSeconds: 600)))
    }

    @Test(arguments: [
        (["ice-servers": "turn:198.18.1.1:3478"], "TURN servers need the secret"),
        (["ice-servers": "http://198.18.1.1"], "is not a stun:, turn: or turns: URL"),
        (["turn-secret-file": "/nonexistent"], "give --ice-servers"),
        (["ice-servers": "stun:x:1", "turn-secret-file": "/nonexistent/secret"], "cannot read /nonexistent/secret"),
        (["ice-servers": "stun:x:1", "turn-credential-ttl": "5"], "turn-credential-ttl"),
    ])
    func badICESettingsAreExplained(flags: [String: String], message: String) {
        do {
            _ = try ServerSettings.configuration(flags: flags, environment: [:])
            Issue.record("accepted \(flags)")
        } catch {
            #expect("\(error)".contains(message))
        }
    }

    @Test func environmentNamesFollowTheFlags() {
        #expect(ServerSettings.environmentName("max-frame-bytes") == "CALLAPI_MAX_FRAME_BYTES")
    }
}

/// The call ledger's `callapi serve` settings.
@Suite struct LedgerServerSettingsTests {
    @Test func theLedgerIsOnByDefaultInAFileUnderTheDataFolder() throws {
        let ledger = try ServerSettings.configuration(flags: ["data-dir": "/var/lib/callapi/"], environment: [:]).ledger
        #expect(ledger.enabled)
        #expect(ledger.database == .sqlite(path: "/var/lib/callapi/callapi-ledger.sqlite"))
        #expect(ledger.retentionDays == 90)
        #expect(!ledger.answersBusy)
    }

    @Test func aProductionServerKeepsTheLedgerInThePlatformDataFolderByDefault() throws {
        let secret = ["secret": String(repeating: "s", count: 40)]
        let xdg = try ServerSettings.configuration(
            flags: secret, environment: ["XDG_DATA_HOME": "/srv/data", "HOME": "/home/op"])
        #expect(xdg.ledger.database == .sqlite(path: "/srv/data/callapi/callapi-ledger.sqlite"))
        #expect(xdg.dataDirectory == .init(path: "/srv/data/callapi", origin: .platformDefault))
        #if os(Linux)
            let home = try ServerSettings.configuration(flags: secret, environment: ["HOME": "/home/op"]).ledger
            #expect(home.database == .sqlite(path: "/home/op/.local/share/callapi/callapi-ledger.sqlite"))
        #endif
        let chosen = try ServerSettings.configuration(
            flags: secret.merging(["data-dir": "/var/lib/callapi"]) { $1 }, environment: ["XDG_DATA_HOME": "/srv"])
        #expect(chosen.ledger.database == .sqlite(path: "/var/lib/callapi/callapi-ledger.sqlite"))
        #expect(chosen.dataDirectory == .init(path: "/var/lib/callapi", origin: .flag))
    }

    @Test func aDevelopmentServerKeepsTheLedgerInTheCurrentFolderByItsFullPath() throws {
        let development = try ServerSettings.configuration(flags: [:], environment: ["XDG_DATA_HOME": "/srv/data"])
        let folder = FileManager.default.currentDirectoryPath
        #expect(development.ledger.database == .sqlite(path: folder + "/callapi-ledger.sqlite"))
        #expect(development.dataDirectory == .init(path: folder, origin: .currentFolder))
    }

    @Test func settingsChooseTheDatabaseRetentionAndBusyAnswers() throws {
        let ledger = try ServerSettings.configuration(
            flags: ["ledger-database": "postgres://callapi@db:5432/calls", "ledger-retention-days": "0"],
            environment: [
                "CALLAPI_ANSWER_BUSY": "1", "CALLAPI_LEDGER_LIVENESS": "45", "CALLAPI_LEDGER_RING_TIMEOUT": "90",
            ]
        ).ledger
        #expect(ledger.database == .postgres(url: "postgres://callapi@db:5432/calls"))
        #expect(ledger.retentionDays == nil)
        #expect(ledger.answersBusy)
        #expect(ledger.livenessSeconds == 45)
        #expect(ledger.ringTimeoutSeconds == 90)
        #expect(try ServerSettings.configuration(flags: ["ledger": "off"], environment: [:]).ledger.enabled == false)
    }

    @Test(arguments: [
        ["ledger": "maybe"], ["ledger-database": "mysql://x@y/z"], ["ledger-retention-days": "-1"],
        ["ledger-liveness": "0"], ["ledger-ring-timeout": "0"], ["answer-busy": "1", "ledger": "0"],
    ])
    func badLedgerSettingsAreRefusedWithTheirName(flags: [String: String]) {
        #expect(throws: ServerSettings.InvalidSetting.self) {
            _ = try ServerSettings.configuration(flags: flags, environment: [:])
        }
    }

    @Test func callWebhookSettingsComeFromFlagsAndTheEnvironment() throws {
        let ledger = try ServerSettings.configuration(
            flags: ["call-webhook-url": "https://business.example/calls", "call-webhook-retention-days": "30"],
            environment: ["CALLAPI_CALL_WEBHOOK_SECRET": "s3cret", "CALLAPI_CALL_WEBHOOK_MAX_PENDING": "500"]
        ).ledger
        var expected = CallWebhookSettings(url: "https://business.example/calls", secret: "s3cret")
        expected.retentionDays = 30
        expected.maxPendingEvents = 500
        #expect(ledger.webhook == expected)
        #expect(try ServerSettings.configuration(flags: [:], environment: [:]).ledger.webhook == nil)
    }

    @Test(arguments: [
        ["call-webhook-url": "ftp://x"], ["call-webhook-secret": "alone"],
        ["call-webhook-url": "http://x/calls", "ledger": "0"],
        ["call-webhook-url": "http://x/calls", "call-webhook-retention-days": "0"],
        ["call-webhook-url": "http://x/calls", "call-webhook-max-pending": "0"],
    ])
    func badCallWebhookSettingsAreRefusedWithTheirName(flags: [String: String]) {
        #expect(throws: ServerSettings.InvalidSetting.self) {
            _ = try ServerSettings.configuration(flags: flags, environment: [:])
        }
    }
}
