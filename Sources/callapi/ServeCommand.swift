import ArgumentParser
import CallAPIServer
import Foundation
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Run the signaling server: WebSockets /v1/signal and /v1/rtc, POST /v1/tokens, /v1/channels, /healthz, /metrics.",
        discussion: """
            Every option can also be set with an environment variable: CALLAPI_ and the option's name in capitals \
            with _ for - (CALLAPI_PORT, CALLAPI_SECRET, CALLAPI_ADMIN_KEY, ...). Options win over the environment.
            With no secret or key the server runs for development with a public secret, and says so loudly.
            SIGTERM or SIGINT shut it down gracefully: clients are told, then connections drain.
            """)

    @Option(help: "Address to listen on (default 127.0.0.1).") var host: String?
    @Option(help: "Port (default 8080; 0 picks a free one).") var port: String?
    @Option(help: "HS256 secret, at least 32 bytes.") var secret: String?
    @Option(name: .customLong("es256-private-key"), help: "ES256 private key file (PEM).") var es256PrivateKey: String?
    @Option(name: .customLong("es256-public-key"), help: "ES256 public key file (PEM), to check tokens only.")
    var es256PublicKey: String?
    @Option(name: .customLong("admin-key"), help: "Key for POST /v1/tokens.") var adminKey: String?
    @Option(name: .customLong("tls-cert"), help: "TLS certificate chain file (PEM).") var tlsCert: String?
    @Option(name: .customLong("tls-key"), help: "TLS private key file (PEM).") var tlsKey: String?
    @Option(name: .customLong("max-frame-bytes"), help: "Largest frame (default 65536).") var maxFrameBytes: String?
    @Option(help: "Frames per second per session (default 20).") var rate: String?
    @Option(help: "Frames per session in a burst (default 40).") var burst: String?
    @Option(name: .customLong("max-sessions"), help: "Sessions per user (default 5).") var maxSessions: String?
    @Option(name: .customLong("max-held"), help: "Held messages per offline user (default 50).") var maxHeld: String?
    @Option(name: .customLong("max-ttl"), help: "Longest held-message TTL in seconds (default 300).") var maxTTL:
        String?
    @Option(name: .customLong("token-notice"), help: "Seconds of notice before token expiry (default 60).")
    var tokenNotice: String?
    @Option(name: .customLong("idle-timeout"), help: "Seconds of silence before a drop (default 45).")
    var idleTimeout: String?
    @Option(name: .customLong("login-timeout"), help: "Seconds to log in after connecting (default 10).")
    var loginTimeout: String?
    @Option(
        name: .customLong("invitation-receive-window"),
        help: "Seconds the callee has to acknowledge an invitation (default 30).")
    var invitationReceiveWindow: String?
    @Option(
        name: .customLong("invitation-expiry"), help: "Seconds before an unanswered invitation expires (default 60).")
    var invitationExpiry: String?
    @Option(
        name: .customLong("invitation-accept-window"),
        help: "Seconds the caller has to acknowledge an accepted invitation (default 10).")
    var invitationAcceptWindow: String?
    @Option(
        name: .customLong("match-max-waiting"), help: "Users who may wait in the match queue at once (default 10000).")
    var matchMaxWaiting: String?
    @Option(
        name: .customLong("place-call-window"),
        help: "Seconds a caller's client has to place a server-placed call (default 5).")
    var placeCallWindow: String?
    @Option(
        name: .customLong("max-held-per-sender"),
        help: "Messages one sender may have held for offline users (default 100).")
    var maxHeldPerSender: String?
    @Option(
        name: .customLong("max-held-bytes"), help: "Bytes of held message bodies on the server (default 67108864).")
    var maxHeldBytes: String?
    @Option(
        name: .customLong("max-outbox-frames"),
        help: "Frames waiting for one slow reader before it is closed (slow consumer, 4004) (default 256).")
    var maxOutboxFrames: String?
    @Option(
        name: .customLong("max-outbox-bytes"),
        help: "Bytes waiting for one slow reader before it is closed (slow consumer, 4004) (default 4194304).")
    var maxOutboxBytes: String?
    @Option(
        name: .customLong("max-refusals"),
        help: "Rate-limited frames in a row before a flooding connection is closed (default 200).")
    var maxRefusals: String?
    @Option(
        name: .customLong("max-unauthenticated"),
        help: "Connections not yet logged in (or still sending their HTTP request), at most (default 1000).")
    var maxUnauthenticated: String?
    @Option(
        name: .customLong("request-timeout"),
        help: "Seconds a connection has to send its HTTP request head (default 10).")
    var requestTimeout: String?
    @Option(help: "Seconds a shutdown waits for connections to close (default 5).") var drain: String?
    @Option(name: .customLong("channel-capacity"), help: "Members an RTC channel may have (default 2).")
    var channelCapacity: String?
    @Option(
        name: .customLong("channel-watchdog"),
        help: "Seconds a member may stay alone after the other left before it is removed (default 0: off).")
    var channelWatchdog: String?
    @Flag(
        name: .customLong("allow-any-channel-tokens"),
        help: "Accept RTC tokens for any channel (chn \"*\"); per-channel tokens are safer.")
    var allowAnyChannelTokens = false
    @Option(name: .customLong("webhook-url"), help: "URL channel events (userJoined/userLeft) are POSTed to.")
    var webhookURL: String?
    @Option(name: .customLong("webhook-secret"), help: "HMAC-SHA256 key for the X-CallAPI-Signature header.")
    var webhookSecret: String?
    @Option(help: "Keep the call ledger: 1/true or 0/false (default on).") var ledger: String?
    @Option(
        name: .customLong("data-dir"),
        help: "Folder of the server's files: the ledger (default: the current folder), push devices (default: memory).")
    var dataDir: String?
    @Option(
        name: .customLong("ledger-database"),
        help:
            "Ledger database: an SQLite file, or postgres://user@host:port/db (default DATA_DIR/callapi-ledger.sqlite)."
    )
    var ledgerDatabase: String?
    @Option(name: .customLong("ledger-retention-days"), help: "Days ended calls are kept (default 90; 0: forever).")
    var ledgerRetentionDays: String?
    @Flag(name: .customLong("answer-busy"), help: "Answer calls to users in a call with busy on their behalf.")
    var answerBusy = false
    @Option(
        name: .customLong("ledger-liveness"),
        help: "Seconds after a call's last session closed that it ends as dropped (default 30).")
    var ledgerLiveness: String?
    @Option(
        name: .customLong("call-webhook-url"),
        help:
            "URL call events (ringing, accepted, connected, ended, missed) are POSTed to: durable, in order per call, retried from a queue in the ledger's database (docs/webhooks.md)."
    )
    var callWebhookURL: String?
    @Option(
        name: .customLong("call-webhook-secret"),
        help: "HMAC-SHA256 key for the X-CallAPI-Signature header of call webhook posts.")
    var callWebhookSecret: String?
    @Option(
        name: .customLong("call-webhook-retention-days"),
        help: "Days delivered call events are kept for replay, GET /v1/webhooks/events (default 7).")
    var callWebhookRetentionDays: String?
    @Option(
        name: .customLong("call-webhook-max-pending"),
        help: "Undelivered call events kept at most; more are refused, logged and counted (default 10000).")
    var callWebhookMaxPending: String?
    @Option(name: .customLong("push-ring-seconds"), help: "How long a pushed call is held and rings (default 30).")
    var pushRingSeconds: String?
    @Option(
        name: .customLong("push-tombstone-seconds"),
        help: "How long a withdrawn call's tombstone is kept (default 120).")
    var pushTombstoneSeconds: String?
    @Option(name: .customLong("apns-key"), help: "APNs auth key file (.p8).") var apnsKey: String?
    @Option(name: .customLong("apns-key-id"), help: "APNs auth key id.") var apnsKeyId: String?
    @Option(name: .customLong("apns-team-id"), help: "Apple developer team id.") var apnsTeamId: String?
    @Option(name: .customLong("apns-url"), help: "APNs production endpoint.") var apnsURL: String?
    @Option(name: .customLong("apns-sandbox-url"), help: "APNs sandbox endpoint.") var apnsSandboxURL: String?
    @Option(name: .customLong("apns-alert-sound"), help: "Sound of alert call pushes (default ringtone.caf).")
    var apnsAlertSound: String?
    @Option(name: .customLong("fcm-service-account"), help: "FCM service account key file (JSON).")
    var fcmServiceAccount: String?
    @Option(name: .customLong("fcm-url"), help: "FCM endpoint.") var fcmURL: String?
    @Option(name: .customLong("fcm-token-url"), help: "OAuth2 token endpoint for FCM.") var fcmTokenURL: String?
    @Option(name: .customLong("push-ca-file"), help: "Extra trusted root (PEM) for the push endpoints (the mock's).")
    var pushCAFile: String?
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error (default info).")
    var logLevel: String?

    func run() async throws {
        let flags: [String: String?] = [
            "host": host, "port": port, "secret": secret, "es256-private-key": es256PrivateKey,
            "es256-public-key": es256PublicKey, "admin-key": adminKey, "tls-cert": tlsCert, "tls-key": tlsKey,
            "max-frame-bytes": maxFrameBytes, "rate": rate, "burst": burst, "max-sessions": maxSessions,
            "max-held": maxHeld, "max-ttl": maxTTL, "token-notice": tokenNotice, "idle-timeout": idleTimeout,
            "login-timeout": loginTimeout, "invitation-receive-window": invitationReceiveWindow,
            "invitation-expiry": invitationExpiry, "invitation-accept-window": invitationAcceptWindow, "drain": drain,
            "match-max-waiting": matchMaxWaiting, "place-call-window": placeCallWindow,
            "channel-capacity": channelCapacity,
            "channel-watchdog": channelWatchdog, "allow-any-channel-tokens": allowAnyChannelTokens ? "1" : nil,
            "webhook-url": webhookURL, "webhook-secret": webhookSecret,
            "max-held-per-sender": maxHeldPerSender, "max-held-bytes": maxHeldBytes,
            "max-outbox-frames": maxOutboxFrames, "max-outbox-bytes": maxOutboxBytes, "max-refusals": maxRefusals,
            "max-unauthenticated": maxUnauthenticated, "request-timeout": requestTimeout,
            "ledger": ledger, "data-dir": dataDir, "ledger-database": ledgerDatabase,
            "ledger-retention-days": ledgerRetentionDays, "answer-busy": answerBusy ? "1" : nil,
            "ledger-liveness": ledgerLiveness, "call-webhook-url": callWebhookURL,
            "call-webhook-secret": callWebhookSecret, "call-webhook-retention-days": callWebhookRetentionDays,
            "call-webhook-max-pending": callWebhookMaxPending,
            "push-ring-seconds": pushRingSeconds, "push-tombstone-seconds": pushTombstoneSeconds,
            "apns-key": apnsKey, "apns-key-id": apnsKeyId, "apns-team-id": apnsTeamId, "apns-url": apnsURL,
            "apns-sandbox-url": apnsSandboxURL, "apns-alert-sound": apnsAlertSound,
            "fcm-service-account": fcmServiceAccount, "fcm-url": fcmURL, "fcm-token-url": fcmTokenURL,
            "push-ca-file": pushCAFile,
        ]
        let configuration: SignalServerConfiguration
        do {
            configuration = try ServerSettings.configuration(flags: flags.compactMapValues { $0 })
        } catch {
            throw ValidationError("\(error)")
        }
        var logger = Logger(label: "callapi.server")
        let level = logLevel ?? ProcessInfo.processInfo.environment["CALLAPI_LOG_LEVEL"] ?? "info"
        logger.logLevel = Logger.Level(rawValue: level) ?? .info

        if configuration.usesDevelopmentSecret {
            FileHandle.standardError.write(Data(Self.developmentBanner(configuration).utf8))
        }
        let server = try await SignalServer(configuration: configuration, logger: logger)
        Task {
            let scheme = configuration.tls == nil ? "ws" : "wss"
            let port = await server.waitUntilListening()
            let http = configuration.tls == nil ? "http" : "https"
            let lines = """
                callapi serve: listening on \(scheme)://\(configuration.host):\(port)/v1/signal
                  rtc     \(scheme)://\(configuration.host):\(port)/v1/rtc (channel capacity \(configuration.channels.capacity))
                  tokens  POST \(http)://\(configuration.host):\(port)/v1/tokens (\(server.authority.algorithm))
                  health  \(http)://\(configuration.host):\(port)/healthz   metrics  /metrics

                """
            FileHandle.standardOutput.write(Data(lines.utf8))
        }
        try await server.runUntilSignalled()
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
