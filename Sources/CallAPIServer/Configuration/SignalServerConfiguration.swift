import CallAPIServerCore
/// Everything `callapi serve` can be told. The defaults run a development server on 127.0.0.1:8080.
public struct SignalServerConfiguration: Sendable {
    /// The address to listen on.
    public var host: String = "127.0.0.1"
    /// The port to listen on; 0 picks a free one (see ``SignalServer/port``).
    public var port: Int = 8080
    /// How tokens are signed and checked.
    public var signingKey: SigningKey = .hs256(secret: SigningKey.developmentSecret)
    /// The key `POST /v1/tokens` requires as `Authorization: Bearer <key>`; `nil` disables the endpoint.
    public var adminKey: String?
    /// Where the `/phone` page of a production server asks for tokens (`--phone-token-url`; docs/web.md).
    public var phoneTokenURL: String?
    /// PEM certificate chain and private key paths; both set means the server speaks TLS (wss/https).
    public var tls: TLSFiles?
    /// Limits and timeouts.
    public var limits = HubLimits()
    /// RTC channels (`/v1/rtc`): capacity, watchdog, token policy and webhook.
    public var channels = ChannelSettings()
    /// The call ledger (on by default; in memory unless configured: `callapi serve` keeps a file).
    public var ledger = LedgerSettings()
    /// The folder of the server's files, as `callapi serve` chose it; `nil`: the server keeps no files of its own
    /// (configured in code, as the tests do).
    public var dataDirectory: DataDirectory?
    /// How often the server checks timeouts and expiries, in milliseconds; `nil` leaves it to ``SignalServer/tick()``
    /// (tests).
    public var tickIntervalMillis: Int64? = 1000
    /// Seconds a graceful shutdown waits for connections to close.
    public var drainSeconds: Int = 5
    /// Event loop threads the server runs its sockets on; `nil`: SwiftNIO's shared group, one loop per core. A
    /// machine that also runs other busy processes (an app server, a load generator) may do better with fewer.
    public var eventLoops: Int?
    /// The largest body an admin request may have, in bytes; a larger one is answered 413 before it is read whole.
    public var adminBodyLimit: Int = AdminJSONBody.defaultLimit
    /// The longest lifetime `POST /v1/tokens` issues, in seconds.
    public var maxIssuedTTLSeconds: Int = 24 * 3600
    /// Call pushes: device registrations, APNs and FCM (docs/push.md).
    public var push = PushConfiguration()
    /// This server as one node of a cluster sharing a PostgreSQL database (docs/scale-out.md); `nil`: the only node.
    public var cluster: ClusterSettings?

    /// Certificate chain and key files for TLS.
    public struct TLSFiles: Sendable, Equatable {
        public var certificatePath: String
        public var privateKeyPath: String
        public init(certificatePath: String, privateKeyPath: String) {
            self.certificatePath = certificatePath
            self.privateKeyPath = privateKeyPath
        }
    }

    public init() {}

    /// Whether the server runs with the public development secret.
    public var usesDevelopmentSecret: Bool { signingKey == .hs256(secret: SigningKey.developmentSecret) }
}
