import CallAPIServerCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Builds a ``SignalServerConfiguration`` from command-line flags and `CALLAPI_*` environment variables.
///
/// Each setting has a name (`port`, `secret`, …); a flag of that name wins over the environment variable
/// `CALLAPI_` + the name upper-cased with `_` for `-` (`CALLAPI_PORT`, `CALLAPI_SECRET`, …).
public enum ServerSettings {
    /// One setting: the flag `--name`, the environment variable ``environmentName(_:)``, and what it means.
    public struct Setting: Sendable {
        public let name: String
        public let help: String
        /// A switch: `--name` alone turns it on (`--name=0` turns it off); every other setting takes a value.
        public let isSwitch: Bool

        init(_ name: String, _ help: String, isSwitch: Bool = false) {
            self.name = name
            self.help = help
            self.isSwitch = isSwitch
        }
    }

    /// Every setting, in the order `callapi serve --help` lists them: the one place each is declared.
    public static let settings: [Setting] = [
        .init("host", "address to listen on (default 127.0.0.1)"),
        .init("port", "port to listen on (default 8080; 0 picks one)"),
        .init("secret", "HS256 secret, at least 32 bytes (default: the public development secret)"),
        .init("es256-private-key", "path of an ES256 private key (PEM) to sign and check tokens with"),
        .init("es256-public-key", "path of an ES256 public key (PEM) to check tokens minted elsewhere"),
        .init("admin-key", "key for POST /v1/tokens (default: disabled, or a dev key with the dev secret)"),
        .init("tls-cert", "path of the TLS certificate chain (PEM); with --tls-key the server speaks wss/https"),
        .init("tls-key", "path of the TLS private key (PEM)"),
        .init("max-frame-bytes", "largest frame in bytes (default 65536)"),
        .init("rate", "sustained frames per second per session (default 20)"),
        .init("burst", "frames per session in a burst (default 40)"),
        .init("max-sessions", "sessions per user (default 5)"),
        .init("max-held", "messages held per offline user (default 50)"),
        .init("max-ttl", "longest time-to-live of a held message, seconds (default 300)"),
        .init("max-held-per-sender", "messages one sender may have held for offline users (default 100)"),
        .init("max-held-bytes", "bytes of held message bodies on the whole server (default 67108864)"),
        .init(
            "max-outbox-frames",
            "frames waiting for one connection before it is closed as a slow consumer (default 256)"),
        .init(
            "max-outbox-bytes",
            "bytes waiting for one connection before closing it as a slow consumer (default 4194304)"
        ),
        .init("max-refusals", "rate-limited frames in a row before a connection is closed (default 200)"),
        .init(
            "max-unauthenticated",
            "connections not logged in yet, or still sending their request head (default: an eighth of the open-file "
                + "limit above 128, 8 to 1000)"),
        .init("request-timeout", "seconds a connection has to send its HTTP request head (default 10)"),
        .init(
            "admin-body-limit",
            "largest body of an admin request (POST /v1/tokens, /v1/calls, kick), bytes; larger "
                + "ones are answered 413 (default 65536)"),
        .init("token-notice", "seconds before token expiry that a session is told (default 60)"),
        .init("idle-timeout", "seconds of silence before a session is dropped (default 45)"),
        .init("login-timeout", "seconds a new connection has to log in (default 10)"),
        .init("invitation-receive-window", "seconds the callee has to acknowledge an invitation (default 30)"),
        .init("invitation-expiry", "seconds after which an invitation nobody answered expires (default 60)"),
        .init("invitation-accept-window", "seconds the caller has to acknowledge an accepted invitation (default 10)"),
        .init("match-max-waiting", "users who may wait in the match queue at once (default 10000)"),
        .init("place-call-window", "seconds a caller's client has to place a server-placed call (default 5)"),
        .init("drain", "seconds a shutdown waits for connections to close (default 5)"),
        .init("event-loops", "event loop threads for the sockets (default: one per core)"),
        .init("channel-capacity", "users an RTC channel may have (default 2)"),
        .init("channel-devices", "devices each user may have in one RTC channel (default 4)"),
        .init("channel-watchdog", "seconds a member may stay alone after a call before removal (default 0: off)"),
        .init(
            "allow-any-channel-tokens", "accept RTC tokens for any channel (chn \"*\") (default off)", isSwitch: true),
        .init(
            "ice-servers",
            "STUN and TURN servers handed to each RTC channel member with its join, comma-separated: "
                + "stun:HOST:PORT, turn:HOST:PORT?transport=udp|tcp, turns:HOST:PORT (default none; docs/protocol.md)"),
        .init(
            "turn-secret-file",
            "file holding the secret shared with the TURN server (coturn's static-auth-secret): each member gets "
                + "short-lived TURN credentials minted with it (needed with turn: URLs)"),
        .init("turn-credential-ttl", "seconds minted TURN credentials stay valid (default 86400)"),
        .init("webhook-url", "URL that channel events (userJoined, userLeft) are POSTed to (default: none)"),
        .init("webhook-secret", "HMAC-SHA256 key of the X-CallAPI-Signature header of webhook posts"),
        .init(
            "phone-token-url",
            "URL of the app's backend that the /phone page asks for tokens (POST {userId, channel?} with the user's "
                + "cookies, answered {token}); a development server's page mints its own (docs/web.md)"),
        .init("ledger", "keep the call ledger (history, missed calls): 1 or true, 0 or false (default on)"),
        .init(
            "data-dir",
            "folder of the server's files: the ledger's SQLite database and the push device registrations "
                + "(devices.json; without --data-dir they are kept in memory). Default: the current folder in "
                + "development mode, else $XDG_DATA_HOME/callapi or ~/.local/share/callapi (created if missing)"
        ),
        .init(
            "ledger-database",
            "the ledger's database: an SQLite file path, or postgres://user[:password]@host[:port]/db "
                + "(default DATA_DIR/callapi-ledger.sqlite)"
        ),
        .init(
            "node-id",
            "this node's id in a cluster: 1-32 characters of a-z 0-9 _ (default: the host name and the port)"),
        .init(
            "cluster-database",
            "postgres://user[:password]@host[:port]/db that the cluster's nodes share; servers with the same one "
                + "form one service (default: the ledger's database when it is PostgreSQL; docs/scale-out.md)"
        ),
        .init(
            "cluster-url",
            "ws(s)://host:port where clients reach this node, given to clients whose RTC channel meets here "
                + "(default none: clients reach the nodes through a proxy; docs/scale-out.md)"),
        .init("cluster-heartbeat-ms", "milliseconds between a node's heartbeats (default 1000)"),
        .init("cluster-dead-after-ms", "milliseconds without a heartbeat after which a node is dead (default 3000)"),
        .init("ledger-retention-days", "days ended calls are kept (default 90; 0 keeps them forever)"),
        .init("answer-busy", "answer calls to users in a call with busy on their behalf (default off)", isSwitch: true),
        .init("ledger-liveness", "seconds after a call's last session closed that it ends as dropped (default 30)"),
        .init(
            "ledger-ring-timeout",
            "seconds a ringing call may go unspoken of before the server ends it on both sides (default 120)"),
        .init(
            "call-webhook-url",
            "URL that call events (ringing, accepted, connected, ended, missed) are POSTed to, durably, in order per "
                + "call, retried from a queue in the ledger's database (needs the ledger; default: none)"
        ),
        .init("call-webhook-secret", "HMAC-SHA256 key of the X-CallAPI-Signature header of call webhook posts"),
        .init("call-webhook-retention-days", "days delivered call events are kept for replay (default 7)"),
        .init(
            "call-webhook-max-pending",
            "undelivered call events kept at most; more are refused and counted (default 10000)"
        ),
        .init("push-ring-seconds", "how long a call pushed to an offline user is held and rings, seconds (default 30)"),
        .init(
            "push-tombstone-seconds",
            "how long a withdrawn call's tombstone waits for the callee, seconds (default 120)"),
        .init("apns-key", "path of the APNs auth key (.p8, PEM); with --apns-key-id and --apns-team-id enables APNs"),
        .init("apns-key-id", "the APNs auth key's id"),
        .init("apns-team-id", "the Apple developer team id"),
        .init("apns-url", "APNs production endpoint (default https://api.push.apple.com)"),
        .init("apns-sandbox-url", "APNs sandbox endpoint (default https://api.sandbox.push.apple.com)"),
        .init("apns-alert-sound", "sound file of alert call pushes (default ringtone.caf)"),
        .init("fcm-service-account", "path of the FCM service account key (JSON); enables FCM"),
        .init("fcm-url", "FCM endpoint (default https://fcm.googleapis.com)"),
        .init("fcm-token-url", "OAuth2 token endpoint (default: the service account's token_uri)"),
        .init("push-ca-file", "extra trusted root certificate (PEM) for the push endpoints, e.g. callapi push-mock's"),
    ]

    /// The admin key used with the development secret when none is configured.
    public static let developmentAdminKey = "callapi-dev-admin-key"

    /// Why a setting, or a command-line argument meant as one, is wrong.
    public struct InvalidSetting: Error, CustomStringConvertible {
        /// What is wrong: a setting's flag (`--name`), or the argument as it was given.
        public var subject: String
        public var problem: String
        public var description: String { "\(subject): \(problem)" }

        init(name: String, problem: String) {
            subject = "--\(name)"
            self.problem = problem
        }

        init(argument: String, problem: String) {
            subject = argument
            self.problem = problem
        }
    }

    /// Reads settings from command-line arguments: `--name value`, `--name=value`, and a switch alone (`--name`,
    /// which means `1`). A name that is not a setting, a value missing, or a setting given twice is an error.
    public static func flags(from arguments: [String]) throws -> [String: String] {
        let byName = Dictionary(uniqueKeysWithValues: settings.map { ($0.name, $0) })
        var flags: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw InvalidSetting(argument: argument, problem: "expected a setting, --name value")
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            guard let setting = byName[name] else {
                throw InvalidSetting(argument: argument, problem: "no such setting (callapi serve --help lists them)")
            }
            let value: String
            if let equals = body.firstIndex(of: "=") {
                value = String(body[body.index(after: equals)...])
            } else if setting.isSwitch {
                value = "1"
            } else {
                guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                    throw InvalidSetting(argument: argument, problem: "give a value: --\(name) VALUE")
                }
                value = arguments[index]
                index += 1
            }
            guard flags.updateValue(value, forKey: name) == nil else {
                throw InvalidSetting(argument: argument, problem: "given twice")
            }
        }
        return flags
    }

    /// The settings as help text: each one's flag, environment variable and meaning.
    public static var helpText: String {
        settings.map { setting in
            "--\(setting.name)\(setting.isSwitch ? "" : " VALUE")  (\(environmentName(setting.name)))\n  \(setting.help)"
        }.joined(separator: "\n")
    }

    /// The environment variable for a setting.
    public static func environmentName(_ name: String) -> String {
        "CALLAPI_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// Reads `flags` (by setting name) over `environment`; reads PEM files from disk. `descriptorLimit`, the
    /// process's open-file limit, sets the default of `max-unauthenticated` (``HubLimits/maxUnauthenticated(descriptors:)``).
    public static func configuration(
        flags: [String: String], environment: [String: String] = ProcessInfo.processInfo.environment,
        descriptorLimit: Int? = nil
    ) throws -> SignalServerConfiguration {
        func value(_ name: String) -> String? {
            assert(settings.contains { $0.name == name }, "\(name) is read but not in ServerSettings.settings")
            if let flag = flags[name], !flag.isEmpty { return flag }
            if let env = environment[environmentName(name)], !env.isEmpty { return env }
            return nil
        }
        func int(_ name: String, range: ClosedRange<Int>) throws -> Int? {
            guard let text = value(name) else { return nil }
            guard let number = Int(text), range.contains(number) else {
                throw InvalidSetting(name: name, problem: "\"\(text)\" is not a whole number in \(range)")
            }
            return number
        }
        func httpsURL(_ name: String, _ url: String) throws -> String {
            guard url.hasPrefix("https://") else {
                throw InvalidSetting(
                    name: name, problem: "\"\(url)\" is not an https URL (push services speak HTTP/2 over TLS)")
            }
            return url.hasSuffix("/") ? String(url.dropLast()) : url
        }
        func file(_ name: String) throws -> String? {
            guard let path = value(name) else { return nil }
            do {
                return try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw InvalidSetting(name: name, problem: "cannot read \(path)")
            }
        }

        var configuration = SignalServerConfiguration()
        if let host = value("host") { configuration.host = host }
        if let port = try int("port", range: 0...65535) { configuration.port = port }
        let secret = value("secret")
        let privateKey = try file("es256-private-key")
        let publicKey = try file("es256-public-key")
        guard [secret != nil, privateKey != nil, publicKey != nil].filter({ $0 }).count <= 1 else {
            throw InvalidSetting(
                name: "secret", problem: "give one of --secret, --es256-private-key, --es256-public-key")
        }
        if let secret {
            guard secret.utf8.count >= TokenAuthority.minimumSecretBytes else {
                throw InvalidSetting(
                    name: "secret",
                    problem: "use at least \(TokenAuthority.minimumSecretBytes) bytes (openssl rand -hex 32)")
            }
            configuration.signingKey = .hs256(secret: secret)
        } else if let privateKey {
            configuration.signingKey = .es256PrivateKey(pem: privateKey)
        } else if let publicKey {
            configuration.signingKey = .es256PublicKey(pem: publicKey)
        }
        configuration.adminKey =
            value("admin-key") ?? (configuration.usesDevelopmentSecret ? developmentAdminKey : nil)
        switch (value("tls-cert"), value("tls-key")) {
        case (let cert?, let key?):
            configuration.tls = .init(certificatePath: cert, privateKeyPath: key)
        case (nil, nil):
            break
        default:
            throw InvalidSetting(name: "tls-cert", problem: "give both --tls-cert and --tls-key")
        }
        var limits = configuration.limits
        if let v = try int("max-frame-bytes", range: 1024...(16 << 20)) { limits.maxFrameBytes = v }
        if let text = value("rate") {
            guard let rate = Double(text), rate > 0 else {
                throw InvalidSetting(name: "rate", problem: "\"\(text)\" is not a positive number")
            }
            limits.ratePerSecond = rate
        }
        if let v = try int("burst", range: 1...100_000) { limits.burst = v }
        if let v = try int("max-sessions", range: 1...1000) { limits.maxSessionsPerUser = v }
        if let v = try int("max-held", range: 0...100_000) { limits.maxHeldPerUser = v }
        if let v = try int("max-ttl", range: 0...86_400) { limits.maxTTLSeconds = v }
        if let v = try int("token-notice", range: 0...86_400) { limits.tokenNoticeMillis = Int64(v) * 1000 }
        if let v = try int("idle-timeout", range: 1...86_400) { limits.idleTimeoutMillis = Int64(v) * 1000 }
        if let v = try int("login-timeout", range: 1...3600) { limits.loginTimeoutMillis = Int64(v) * 1000 }
        if let v = try int("max-held-per-sender", range: 0...1_000_000) { limits.maxHeldPerSender = v }
        if let v = try int("max-held-bytes", range: 0...(16 << 30)) { limits.maxHeldBytes = v }
        if let v = try int("max-outbox-frames", range: 1...1_000_000) { limits.maxOutboxFrames = v }
        if let v = try int("max-outbox-bytes", range: 1024...(1 << 30)) { limits.maxOutboxBytes = v }
        if let v = try int("max-refusals", range: 1...1_000_000) { limits.maxRefusalsInARow = v }
        if let v = try int("max-unauthenticated", range: 1...1_000_000) {
            limits.maxUnauthenticated = v
        } else if let descriptorLimit {
            limits.maxUnauthenticated = HubLimits.maxUnauthenticated(descriptors: descriptorLimit)
        }
        if let v = try int("request-timeout", range: 1...3600) { limits.requestTimeoutMillis = Int64(v) * 1000 }
        if let v = try int("invitation-receive-window", range: 1...3600) {
            limits.invitations.receiveWindowMillis = Int64(v) * 1000
        }
        if let v = try int("invitation-expiry", range: 1...86_400) { limits.invitations.expiryMillis = Int64(v) * 1000 }
        if let v = try int("invitation-accept-window", range: 1...3600) {
            limits.invitations.acceptWindowMillis = Int64(v) * 1000
        }
        if let v = try int("match-max-waiting", range: 1...10_000_000) { limits.match.maxWaiting = v }
        if let v = try int("place-call-window", range: 1...300) { limits.match.placeWindowMillis = Int64(v) * 1000 }
        configuration.limits = limits
        if let v = try int("drain", range: 0...600) { configuration.drainSeconds = v }
        if let v = try int("admin-body-limit", range: 256...(16 << 20)) { configuration.adminBodyLimit = v }
        if let v = try int("event-loops", range: 1...256) { configuration.eventLoops = v }
        var channels = configuration.channels
        if let v = try int("channel-capacity", range: 1...1000) { channels.capacity = v }
        if let v = try int("channel-devices", range: 1...16) { channels.devicesPerUser = v }
        if let v = try int("channel-watchdog", range: 0...86_400) { channels.watchdogSeconds = v }
        if let text = value("allow-any-channel-tokens") {
            switch text.lowercased() {
            case "1", "true", "yes", "on": channels.allowAnyChannelTokens = true
            case "0", "false", "no", "off": channels.allowAnyChannelTokens = false
            default:
                throw InvalidSetting(name: "allow-any-channel-tokens", problem: "\"\(text)\" is not 1/0 or true/false")
            }
        }
        if let list = value("ice-servers") {
            let urls = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let secret = try file("turn-secret-file")?.trimmingCharacters(in: .whitespacesAndNewlines)
            let ttl = try int("turn-credential-ttl", range: 60...(30 * 86_400)) ?? 86_400
            do {
                channels.ice = try ICESettings(urls: urls, turnSecret: secret, credentialSeconds: Int64(ttl))
            } catch {
                throw InvalidSetting(name: "ice-servers", problem: error.description)
            }
        } else if value("turn-secret-file") != nil || value("turn-credential-ttl") != nil {
            throw InvalidSetting(name: "turn-secret-file", problem: "give --ice-servers with the TURN server's URLs")
        }
        if let url = value("phone-token-url") {
            guard url.hasPrefix("http://") || url.hasPrefix("https://") || url.hasPrefix("/") else {
                throw InvalidSetting(name: "phone-token-url", problem: "\"\(url)\" is not an http(s) URL or a path")
            }
            configuration.phoneTokenURL = url
        }
        switch (value("webhook-url"), value("webhook-secret")) {
        case (let url?, let secret):
            guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw InvalidSetting(name: "webhook-url", problem: "\"\(url)\" is not an http(s) URL")
            }
            channels.webhook = WebhookSettings(url: url, secret: secret)
        case (nil, .some):
            throw InvalidSetting(name: "webhook-secret", problem: "give --webhook-url too")
        case (nil, nil):
            break
        }
        configuration.channels = channels
        var push = configuration.push
        if let directory = value("data-dir") {
            push.devicesFile = PushConfiguration.devicesFile(inDataDirectory: directory)
        }
        if let v = try int("push-ring-seconds", range: 1...300) { push.policy.ringSeconds = v }
        if let v = try int("push-tombstone-seconds", range: 1...86_400) { push.policy.tombstoneSeconds = v }
        let apnsValues = ["apns-key", "apns-key-id", "apns-team-id"].map { value($0) }
        if apnsValues.contains(where: { $0 != nil }) {
            guard let keyId = apnsValues[1], let teamId = apnsValues[2], let key = try file("apns-key") else {
                throw InvalidSetting(
                    name: "apns-key", problem: "give --apns-key, --apns-key-id and --apns-team-id together")
            }
            var apns = APNsSettings(privateKeyPEM: key, keyId: keyId, teamId: teamId)
            if let url = value("apns-url") { apns.productionURL = try httpsURL("apns-url", url) }
            if let url = value("apns-sandbox-url") { apns.sandboxURL = try httpsURL("apns-sandbox-url", url) }
            if let sound = value("apns-alert-sound") { apns.alertSound = sound }
            push.apns = apns
        }
        if let json = try file("fcm-service-account") {
            let account: FCMServiceAccount
            do {
                account = try FCMServiceAccount(json: json)
            } catch {
                throw InvalidSetting(
                    name: "fcm-service-account",
                    problem:
                        "not a service account key (needs project_id, client_email, private_key_id, private_key, token_uri)"
                )
            }
            var fcm = FCMSettings(account: account)
            if let url = value("fcm-url") { fcm.endpoint = try httpsURL("fcm-url", url) }
            if let url = value("fcm-token-url") { fcm.tokenURL = try httpsURL("fcm-token-url", url) }
            push.fcm = fcm
        }
        push.trustedRootPEM = try file("push-ca-file")
        configuration.push = push
        let dataDirectory = DataDirectory.choose(
            flag: value("data-dir"), development: configuration.usesDevelopmentSecret, environment: environment)
        configuration.dataDirectory = dataDirectory
        configuration.ledger = try ledgerSettings(value: value, int: int, dataDirectory: dataDirectory)
        configuration.cluster = try clusterSettings(
            value: value, int: int, ledger: configuration.ledger, port: configuration.port)
        return configuration
    }

    /// One node of a cluster when the server has a PostgreSQL database: `--cluster-database`, or else the ledger's
    /// (docs/scale-out.md).
    private static func clusterSettings(
        value: (String) -> String?, int: (String, ClosedRange<Int>) throws -> Int?, ledger: LedgerSettings, port: Int
    ) throws -> ClusterSettings? {
        let url: String
        if let given = value("cluster-database") {
            guard given.hasPrefix("postgres://") || given.hasPrefix("postgresql://") else {
                throw InvalidSetting(name: "cluster-database", problem: "give a postgres:// URL, not \(given)")
            }
            url = given
        } else if ledger.enabled, case .postgres(let ledgerURL) = ledger.database {
            url = ledgerURL
        } else {
            if value("node-id") != nil {
                throw InvalidSetting(
                    name: "node-id",
                    problem: "a cluster shares a PostgreSQL database: give --cluster-database or a postgres:// "
                        + "--ledger-database")
            }
            return nil
        }
        let nodeId = value("node-id") ?? derivedNodeId(port: port)
        if let problem = ClusterSettings.problem(nodeId: nodeId) {
            throw InvalidSetting(name: "node-id", problem: problem)
        }
        var cluster = ClusterSettings(nodeId: nodeId, databaseURL: url)
        if let advertised = value("cluster-url") {
            if let problem = ClusterSettings.problem(advertisedURL: advertised) {
                throw InvalidSetting(name: "cluster-url", problem: problem)
            }
            cluster.advertisedURL = advertised
        }
        if let v = try int("cluster-heartbeat-ms", 50...60_000) { cluster.heartbeatMillis = Int64(v) }
        if let v = try int("cluster-dead-after-ms", 200...600_000) { cluster.deadAfterMillis = Int64(v) }
        guard cluster.deadAfterMillis >= 2 * cluster.heartbeatMillis else {
            throw InvalidSetting(
                name: "cluster-dead-after-ms",
                problem:
                    "give at least twice the heartbeat (\(cluster.heartbeatMillis) ms), or live nodes are found dead")
        }
        return cluster
    }

    /// A node id from the host's name and the port (a random suffix for port 0, which every node may give).
    static func derivedNodeId(port: Int) -> String {
        let host = ProcessInfo.processInfo.hostName.lowercased().map { character -> Character in
            character.isASCII && (character.isLetter || character.isNumber) ? character : "_"
        }
        let suffix = port == 0 ? String(UInt32.random(in: 0 ... .max), radix: 36) : String(port)
        return String(String(host).prefix(31 - suffix.count)) + "_" + suffix
    }

    /// The ledger's settings: on by default, in an SQLite file under the data folder.
    private static func ledgerSettings(
        value: (String) -> String?, int: (String, ClosedRange<Int>) throws -> Int?, dataDirectory: DataDirectory
    ) throws -> LedgerSettings {
        func bool(_ name: String) throws -> Bool? {
            guard let text = value(name) else { return nil }
            switch text.lowercased() {
            case "1", "true", "yes", "on": return true
            case "0", "false", "no", "off": return false
            default: throw InvalidSetting(name: name, problem: "\"\(text)\" is not 1/0 or true/false")
            }
        }
        var ledger = LedgerSettings()
        ledger.enabled = try bool("ledger") ?? true
        switch value("ledger-database") {
        case let url? where url.hasPrefix("postgres://") || url.hasPrefix("postgresql://"):
            ledger.database = .postgres(url: url)
        case let path?:
            guard !path.contains("://") else {
                throw InvalidSetting(
                    name: "ledger-database", problem: "give a file path or a postgres:// URL, not \(path)")
            }
            ledger.database = .sqlite(path: path)
        case nil:
            ledger.database = .sqlite(path: dataDirectory.file("callapi-ledger.sqlite"))
        }
        if let days = try int("ledger-retention-days", 0...36_500) { ledger.retentionDays = days == 0 ? nil : days }
        ledger.answersBusy = try bool("answer-busy") ?? false
        guard ledger.enabled || !ledger.answersBusy else {
            throw InvalidSetting(
                name: "answer-busy", problem: "the server answers busy from the call ledger: leave --ledger on")
        }
        if let seconds = try int("ledger-liveness", 1...86_400) { ledger.livenessSeconds = seconds }
        if let seconds = try int("ledger-ring-timeout", 1...86_400) { ledger.ringTimeoutSeconds = seconds }
        switch (value("call-webhook-url"), value("call-webhook-secret")) {
        case (let url?, let secret):
            guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw InvalidSetting(name: "call-webhook-url", problem: "\"\(url)\" is not an http(s) URL")
            }
            guard ledger.enabled else {
                throw InvalidSetting(
                    name: "call-webhook-url", problem: "call webhooks come from the call ledger: leave --ledger on")
            }
            var webhook = CallWebhookSettings(url: url, secret: secret)
            if let days = try int("call-webhook-retention-days", 1...36_500) { webhook.retentionDays = days }
            if let count = try int("call-webhook-max-pending", 1...10_000_000) { webhook.maxPendingEvents = count }
            ledger.webhook = webhook
        case (nil, .some):
            throw InvalidSetting(name: "call-webhook-secret", problem: "give --call-webhook-url too")
        case (nil, nil):
            break
        }
        return ledger
    }
}
