import ArgumentParser
import CallAPIServer
import CallAPIServerCore
import Foundation
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Run the signaling server: WebSockets /v1/signal and /v1/rtc, POST /v1/tokens, /v1/channels, /healthz, /metrics.",
        discussion: """
            Every setting can also be set with an environment variable: CALLAPI_ and the setting's name in capitals \
            with _ for - (CALLAPI_PORT, CALLAPI_SECRET, CALLAPI_ADMIN_KEY, ...). Flags win over the environment.
            With no secret or key the server runs for development with a public secret, and says so loudly.
            SIGTERM or SIGINT shut it down gracefully: clients are told, then connections drain.

            SETTINGS:

            """ + ServerSettings.helpText)

    @Argument(
        parsing: .allUnrecognized,
        help: .init("Settings: --name VALUE, or a switch alone (listed below).", valueName: "settings"))
    var settings: [String] = []
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error (default info).")
    var logLevel: String?

    func run() async throws {
        // Every connection takes a descriptor: the soft limit goes up to the hard one, and the default cap of
        // connections not logged in yet follows it (docs/security.md).
        let descriptors = DescriptorLimit.raiseSoftLimit()
        let configuration: SignalServerConfiguration
        do {
            configuration = try ServerSettings.configuration(
                flags: ServerSettings.flags(from: settings), descriptorLimit: descriptors?.after)
        } catch {
            throw ValidationError("\(error)")
        }
        var logger = Logger(label: "callapi.server")
        let level = logLevel ?? ProcessInfo.processInfo.environment["CALLAPI_LOG_LEVEL"] ?? "info"
        logger.logLevel = Logger.Level(rawValue: level) ?? .info
        if let descriptors {
            logger.info(
                "open-file limit",
                metadata: [
                    "soft": "\(descriptors.before) -> \(descriptors.after)", "hard": "\(descriptors.hard)",
                    "maxUnauthenticated": "\(configuration.limits.maxUnauthenticated)",
                ])
        }

        if configuration.usesDevelopmentSecret {
            FileHandle.standardError.write(Data(Self.developmentBanner(configuration).utf8))
        }
        try Self.createDataFolder(configuration)
        let server = try await SignalServer(configuration: configuration, logger: logger)
        Task {
            let port = await server.waitUntilListening()
            let banner = ServeBanner.text(configuration, port: port, algorithm: server.authority.algorithm)
            FileHandle.standardOutput.write(Data(banner.utf8))
        }
        try await server.runUntilSignalled()
    }

    /// Creates the data folder (`--data-dir`, or the default one of a production server) when the ledger's file
    /// goes there; a `--ledger-database` path names a folder the operator made.
    static func createDataFolder(_ configuration: SignalServerConfiguration) throws {
        guard let data = configuration.dataDirectory, data.origin != .currentFolder, configuration.ledger.enabled,
            case .sqlite(let path) = configuration.ledger.database, path == data.file("callapi-ledger.sqlite")
        else { return }
        do {
            try FileManager.default.createDirectory(atPath: data.path, withIntermediateDirectories: true)
        } catch {
            throw ValidationError("cannot create the data folder \(data.path) (\(error)); give --data-dir DIR")
        }
    }

    static func developmentBanner(_ configuration: SignalServerConfiguration) -> String {
        let line = String(repeating: "!", count: 78)
        return """
            \(line)
            !! DEVELOPMENT MODE: tokens are signed with the PUBLIC development secret
            !!   "\(SigningKey.developmentSecret)"
            !! and POST /v1/tokens accepts the admin key "\(configuration.adminKey ?? "-")".
            !! Anyone can log in as anyone. Set CALLAPI_SECRET (openssl rand -hex 32) and
            !! CALLAPI_ADMIN_KEY, or --secret/--admin-key, before exposing this server.
            \(line)

            """
    }
}
