import CallAPISignalProtocol
import NIOCore
import NIOPosix

/// How a ``SignalClient`` connects, retries and waits. Times in milliseconds.
public struct SignalClientConfiguration: Sendable {
    /// The servers' WebSocket URLs, e.g. `ws://127.0.0.1:8080/v1/signal`: the nodes of a cluster (docs/scale-out.md).
    /// The client stays with the one that serves it and, when its connection is lost or cannot be made, tries the
    /// next in the list.
    public private(set) var urls: [String]
    /// The first server's WebSocket URL; setting it leaves that one server.
    public var url: String {
        get { urls[0] }
        set { urls = [Self.webSocketURL(from: newValue)] }
    }
    /// The event loops the client may run on: it runs on one of them, where its socket and its state share the
    /// loop. Pass a single `EventLoop` to choose which (an app that places its own work, a bench that spreads its
    /// clients evenly). SwiftNIO's shared group by default.
    public var eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    /// Time-to-live (seconds) asked for messages sent through ``ISignalClient`` `sendMessage`; 0 fails at once when
    /// the peer is offline.
    public var messageTTLSeconds: Int = 0
    /// Whether messages sent through ``ISignalClient`` `sendMessage` are also copied by the server to this user's
    /// other sessions, so that a user's other devices learn at once that a call was accepted or rejected on this
    /// one (docs/multi-device.md).
    public var copiesToOwnSessions = true
    /// The push device this client runs on: the `deviceId` it registers with ``SignalClient/registerDevice(_:)``
    /// (docs/push.md). Sent at login, it lets the server push a call to this user's other devices while this one is
    /// online, and deliver a pushed call to this device when it logs in. `nil`: the server knows no device of this
    /// session, and pushes none of the user's devices while it is online.
    public var deviceId: String?
    /// How often to ping the server.
    public var pingIntervalMillis: Int64 = 15_000
    /// With nothing from the server for this long, the connection is considered dead and replaced.
    public var livenessTimeoutMillis: Int64 = 40_000
    /// First reconnect delay; doubles each failed attempt.
    public var backoffBaseMillis: Int64 = 250
    /// Longest reconnect delay.
    public var backoffMaxMillis: Int64 = 10_000
    /// How long opening a socket and logging in may take before the attempt is abandoned.
    public var connectTimeoutMillis: Int64 = 10_000
    /// How long ``SignalClient/login(token:)`` waits for the first connection.
    public var loginTimeoutMillis: Int64 = 15_000
    /// Sends kept while reconnecting.
    public var sendQueueLimit: Int = 100
    /// Certificates (PEM) a `wss://` server's chain must lead to, in place of the system's roots: a private CA, or
    /// the self-signed certificate of a test deployment. `nil`: the system's roots.
    public var trustedCertificatesPEM: String?
    /// How long a send may wait for the connection before failing.
    public var sendQueueTimeoutMillis: Int64 = 15_000
    /// How long to wait for the server's answer to a frame.
    public var requestTimeoutMillis: Int64 = 10_000
    /// The least time between two checks of the client's timers. They are checked when the next one falls due
    /// (an idle connection wakes only to ping), but no more often than this, however busy the connection.
    public var tickIntervalMillis: Int64 = 100

    public init(url: String) {
        urls = [Self.webSocketURL(from: url)]
    }

    /// A client of the servers at `urls` (at least one), tried in turn.
    public init(urls: [String]) {
        precondition(!urls.isEmpty, "a client needs at least one server URL")
        self.urls = urls.map(Self.webSocketURL(from:))
    }

    /// `url` with the signaling path added when it has none, and `http(s)` turned into `ws(s)`.
    public static func webSocketURL(from url: String) -> String {
        WebSocketURL.make(from: url, defaultPath: SignalProtocol.webSocketPath)
    }
}
