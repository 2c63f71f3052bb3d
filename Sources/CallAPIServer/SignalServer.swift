import CallAPIServerCore
import CallAPISignalProtocol
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// The signaling server: the signaling WebSocket (`/v1/signal`), the RTC channel WebSocket (`/v1/rtc`), the token
/// and channel admin endpoints, `/healthz` and `/metrics`, and the channel webhook.
///
/// Run it as a service in a `ServiceGroup`. On graceful shutdown it tells every session (`closing` with
/// `server_shutdown`) and channel member (`removed` with `serverShutdown`), waits up to
/// ``SignalServerConfiguration/drainSeconds`` for them to close and for the webhook to deliver what is queued, then
/// stops the HTTP server.
public final class SignalServer: Service, Sendable {
    public let configuration: SignalServerConfiguration
    /// Issues and checks tokens with the server's key.
    public let authority: TokenAuthority
    private let hub: SignalHub
    private let channels: ChannelHub
    private let webhook: WebhookNotifier?
    /// The call ledger (docs/ledger.md), unless it is turned off.
    let ledger: CallLedger?
    private let push: PushSetup
    /// The link to the cluster's other nodes, when this server is one of them.
    private let cluster: ClusterLink?
    private let metrics: ServerMetrics
    private let logger: Logger
    private let boundPort = BoundPort()
    private let clock: any SignalServerClock
    private let pendingHeads = ConnectionGuard.PendingHeads()
    /// Set when the graceful shutdown starts: `/healthz` then answers 503, so a proxy sends no new clients here.
    private let draining = NIOLockedValueBox(false)
    private let flushers = LoopFlushers()

    /// A server for `configuration`; throws if a key or certificate cannot be read.
    public init(
        configuration: SignalServerConfiguration, clock: any SignalServerClock = SystemServerClock(),
        logger: Logger = Logger(label: "callapi.server")
    ) async throws {
        self.configuration = configuration
        self.logger = logger
        authority = try await TokenAuthority.make(key: configuration.signingKey, clock: clock)
        let metrics = ServerMetrics()
        metrics.publish(limits: configuration.limits.published + configuration.channels.published)
        self.metrics = metrics
        let ledger =
            configuration.ledger.enabled
            ? try await CallLedger.open(
                settings: configuration.ledger, node: configuration.cluster?.nodeId,
                handOffMillis: configuration.cluster?.timings.callHandOffMillis, clock: clock, metrics: metrics,
                logger: logger)
            : nil
        self.ledger = ledger
        self.clock = clock
        let push: PushSetup
        do {
            push = try await PushSetup.make(configuration.push, clock: clock, metrics: metrics, logger: logger)
        } catch {
            // Whatever was opened is closed on the way out (an open database connection traps when deinitialized).
            await ledger?.closeUnused()
            throw error
        }
        self.push = push
        var cluster: ClusterLink?
        if let settings = configuration.cluster {
            do {
                let link = try ClusterLink(
                    settings: settings, clock: clock, metrics: metrics.cluster(), ledger: ledger,
                    logger: logger)
                try await link.migrate()
                cluster = link
            } catch {
                await ledger?.closeUnused()
                throw error
            }
        }
        self.cluster = cluster
        hub = SignalHub(
            limits: configuration.limits, authority: authority, clock: clock, metrics: metrics, logger: logger,
            pushPolicy: configuration.push.policy, devices: push.registry, push: push.service, ledger: ledger,
            cluster: cluster)
        cluster?.attach(hub)
        let webhook = configuration.channels.webhook.map {
            WebhookNotifier(settings: $0, metrics: metrics, logger: logger)
        }
        self.webhook = webhook
        channels = ChannelHub(
            limits: ChannelLimits(settings: configuration.channels, hub: configuration.limits),
            ice: configuration.channels.ice, maxMessageBytes: SignalHub.hardLimit(for: configuration.limits),
            authority: authority, clock: clock,
            metrics: metrics, webhook: webhook, homes: cluster?.channelHomes, logger: logger)
    }

    /// The cluster link's state, for tests: this node's epoch while it is a member, and how many times its
    /// notification listener has listened (1, plus one per reconnect); `nil` on a single node.
    package var clusterLink: (epoch: Int64?, listens: Int)? { cluster.map { ($0.epoch, $0.listens) } }

    /// The port the server listens on, once it does (useful with port 0).
    public func waitUntilListening() async -> Int {
        await boundPort.wait()
    }

    /// Runs the timeouts and expiry checks now (tests that drive a manual clock call this). `package`: a hook for
    /// this package's tests, not API (a running server ticks on its own, `tickIntervalMillis`).
    package func tick() async {
        hub.tick()
        channels.tick()
    }

    /// A page of a user's calls from the call ledger (every call that had ended when asked is in it).
    public func calls(_ query: CallQuery) async throws -> CallPage {
        guard let ledger else { throw LedgerStoreError("the call ledger is off on this server") }
        return try await ledger.calls(query)
    }

    /// Deletes ledger calls past the retention now (the server also does it hourly); returns how many.
    @discardableResult
    public func applyLedgerRetention() async -> Int {
        await ledger?.applyRetention(now: clock.nowMillis()) ?? 0
    }

    /// The uids in an RTC channel, sorted, each once however many devices it is on.
    public func channelMembers(_ channel: String) async -> [UInt] {
        channels.members(of: channel).uids
    }

    /// The call `callId` on one time line (its record and its devices' reports, docs/timeline.md); `nil` when the
    /// ledger has neither, or is off.
    public func callTimeline(_ callId: String) async throws -> CallTimeline? {
        guard let found = try await ledger?.timeline(callId: callId), found.record != nil || !found.reports.isEmpty
        else { return nil }
        return CallTimeline(callId: callId, record: found.record, reports: found.reports)
    }

    /// The members of an RTC channel (uid and device), in the order they joined.
    public func channelDevices(_ channel: String) async -> [ChannelMember] {
        channels.members(of: channel).devices
    }

    /// Users online now.
    public var onlineUsers: [String] {
        get async { hub.onlineUsers }
    }

    /// Users waiting in the match queue now (docs/match.md).
    public var matchWaitingCount: Int { hub.matchWaitingCount }

    /// Asks `order.caller`'s client to place a call to `order.callee` (what `POST /v1/calls` does, docs/match.md);
    /// returns the call's id, or why it cannot be placed now.
    public func placeCall(_ order: PlaceCallOrder) -> Result<String, PlaceCallRefusal> { hub.placeCall(order) }

    /// The Prometheus text exposition of the server's metrics.
    public func metricsText() -> String { Self.renderMetrics(metrics, hub: hub, channels: channels) }

    /// The gauges are read from the hub and the channels when the metrics are read, not after each event.
    private static func renderMetrics(_ metrics: ServerMetrics, hub: SignalHub, channels: ChannelHub) -> String {
        hub.publishGauges()
        channels.publishGauges()
        return metrics.render()
    }

    /// Runs the server until SIGTERM or SIGINT, then shuts down gracefully (for `callapi serve`).
    public func runUntilSignalled() async throws {
        let group = ServiceGroup(
            configuration: .init(services: [self], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }

    public func run() async throws {
        // With a configured loop count, a group of that size owned by this run; otherwise NIO's shared one.
        guard let threads = configuration.eventLoops else { return try await run(on: .singleton) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        do {
            try await run(on: .shared(group))
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    private func run(on eventLoops: EventLoopGroupProvider) async throws {
        let group = ServiceGroup(
            configuration: .init(services: try parts(eventLoops: eventLoops), logger: logger))
        try await group.run()
        try? await push.client?.shutdown()
        logger.notice("server stopped")
    }

    /// The server's parts, in the order they start. Graceful shutdown stops them in reverse, each after the one
    /// before has returned: tell the sessions and channel members and drain them; deliver the channel webhook's
    /// queue; stop the timers; write the ended calls to the ledger, then end the call webhooks' posts in flight; stop
    /// HTTP; stop push.
    private func parts(eventLoops: EventLoopGroupProvider) throws -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let drain = Duration.seconds(configuration.drainSeconds)
        var parts: [any Service] = [
            ServerPart("push", work: { [push, hub] in await push.service.run(hub: hub) }, finish: push.service.finish),
            try makeApplication(eventLoops: eventLoops),
        ]
        if let cluster {
            // Stopped after the sessions are: the node leaves the cluster once its clients have been told.
            parts.append(ServerPart("cluster", work: cluster.run, finish: cluster.finish))
        }
        if let ledger {
            if let webhooks = ledger.webhooks {
                parts.append(ServerPart("call webhooks", work: webhooks.run, finish: webhooks.finish))
            }
            // Calls still in progress stay unrecorded; what ended is written before the server stops.
            parts.append(ServerPart("call ledger", work: ledger.run, finish: ledger.finish))
            parts.append(
                ServerPart.every(.seconds(3600), "ledger retention") { [clock] in
                    await ledger.applyRetention(now: clock.nowMillis())
                })
        }
        if let interval = configuration.tickIntervalMillis {
            parts.append(
                ServerPart.every(.milliseconds(interval), "ticker") { [hub, channels] in
                    hub.tick()
                    channels.tick()
                })
        }
        if let webhook {
            parts.append(ServerPart("channel webhook", grace: drain, work: webhook.run, finish: webhook.finish))
        }
        parts.append(
            ServerPart.atShutdown("sessions") { [hub, channels, logger, draining] in
                draining.withLockedValue { $0 = true }
                logger.notice("shutting down: telling clients and draining connections")
                hub.shutdown()
                channels.shutdown()
                await ConnectionDrain.wait(for: hub.connectionCloses + channels.connectionCloses, atMost: drain)
                // No connection outlives the server (the event loops do: they are shared).
                hub.abortRemaining()
                channels.abortRemaining()
            })
        return parts.map { .init(service: $0) }
    }

    private func makeApplication(eventLoops: EventLoopGroupProvider) throws -> some ApplicationProtocol {
        let router = Router()
        let hub = hub
        let metrics = metrics
        let channels = channels
        let cluster = cluster
        let draining = draining
        router.get("/healthz") { _, _ -> Response in
            // A proxy in front of a cluster sends new clients only to nodes that answer 200: not to one draining
            // for a stop, nor to one that is not a member of its cluster (docs/scale-out.md).
            let status =
                if draining.withLockedValue({ $0 }) { "draining" } else if let cluster, cluster.epoch == nil {
                    "joining"
                } else { "ok" }
            var body =
                "{\"status\":\"\(status)\",\"sessions\":\(hub.sessionCount),\"usersOnline\":\(hub.onlineUsers.count)"
            if let cluster { body += ",\"node\":\"\(cluster.settings.nodeId)\",\"epoch\":\(cluster.epoch ?? 0)" }
            body += "}"
            return Response(
                status: status == "ok" ? .ok : .serviceUnavailable, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        router.get("/metrics") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(string: Self.renderMetrics(metrics, hub: hub, channels: channels))))
        }
        router.get(RouterPath(stringLiteral: SignalProtocol.webSocketPath)) { _, _ -> Response in
            throw HTTPError(.upgradeRequired, message: "connect with a WebSocket to \(SignalProtocol.webSocketPath)")
        }
        router.get(RouterPath(stringLiteral: ChannelProtocol.webSocketPath)) { _, _ -> Response in
            throw HTTPError(.upgradeRequired, message: "connect with a WebSocket to \(ChannelProtocol.webSocketPath)")
        }
        let jsonBody = AdminJSONBody(limit: configuration.adminBodyLimit)
        TokenEndpoint(
            authority: authority, adminKey: configuration.adminKey, maxTTLSeconds: configuration.maxIssuedTTLSeconds,
            jsonBody: jsonBody
        ).register(on: router)
        ChannelAdminEndpoint(
            hub: channels, homes: cluster?.channelHomes,
            authorization: AdminAuthorization(adminKey: configuration.adminKey), jsonBody: jsonBody
        ).register(on: router)
        CallHistoryEndpoint(ledger: ledger, authorization: AdminAuthorization(adminKey: configuration.adminKey))
            .register(on: router)
        CallWebhookEndpoint(
            webhooks: ledger?.webhooks, authorization: AdminAuthorization(adminKey: configuration.adminKey)
        ).register(on: router)
        DeviceAdminEndpoint(hub: hub, authorization: AdminAuthorization(adminKey: configuration.adminKey))
            .register(on: router)
        CallPlacementEndpoint(
            hub: hub, authorization: AdminAuthorization(adminKey: configuration.adminKey), jsonBody: jsonBody
        ).register(on: router)
        ConsoleEndpoint(
            hub: hub, ledger: ledger, pushes: push.service.log, adminKey: configuration.adminKey, clock: clock
        ).register(on: router)
        WebClientEndpoint(development: configuration.usesDevelopmentSecret, tokenURL: configuration.phoneTokenURL)
            .register(on: router)

        let limits = configuration.limits
        // Every connection starts behind a guard: a deadline and a cap for its request head (see ConnectionGuard). The two WebSocket endpoints run on our own pipeline
        // (WebSocketUpgradeChannel); Hummingbird serves the rest.
        let endpoints: [String: any SessionEndpoint] = [
            SignalProtocol.webSocketPath: hub, ChannelProtocol.webSocketPath: channels,
        ]
        let pending = pendingHeads
        let flushers = flushers
        var server = HTTPServerBuilder { responder in
            GuardedChildChannel(
                base: WebSocketUpgradeChannel(
                    responder: responder, endpoints: endpoints, flushers: flushers,
                    // Keep-alive HTTP connections that go quiet are closed (the guard covers the first head).
                    httpIdleTimeout: .milliseconds(limits.requestTimeoutMillis * 3),
                    maxHeadBytes: RequestHeadScan.maxHeadBytes),
                pending: pending, maxPending: limits.maxUnauthenticated,
                headTimeout: .milliseconds(limits.requestTimeoutMillis))
        }
        if let tls = configuration.tls {
            let chain = try NIOSSLCertificate.fromPEMFile(tls.certificatePath).map {
                NIOSSLCertificateSource.certificate($0)
            }
            let key = try NIOSSLPrivateKey(file: tls.privateKeyPath, format: .pem)
            server = try .tls(
                server,
                tlsConfiguration: .makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key)))
        }
        let boundPort = boundPort
        return Application(
            router: router,
            server: server,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "callapi"),
            onServerRunning: { [logger] channel in
                // Running out of descriptors pauses accepting instead of spinning (see DescriptorReserve).
                try? await channel.eventLoop.submit {
                    try channel.pipeline.syncOperations.addHandler(DescriptorReserve(logger: logger), position: .first)
                }.get()
                await boundPort.set(channel.localAddress?.port ?? 0)
            },
            eventLoopGroupProvider: eventLoops,
            logger: logger
        )
    }
}

/// The listening port, published once the server is up.
private actor BoundPort {
    private var port: Int?
    private var waiters: [CheckedContinuation<Int, Never>] = []

    func set(_ port: Int) {
        self.port = port
        for waiter in waiters { waiter.resume(returning: port) }
        waiters = []
    }

    func wait() async -> Int {
        if let port { return port }
        return await withCheckedContinuation { waiters.append($0) }
    }
}
