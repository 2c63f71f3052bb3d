import CallAPIServerCore
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// The server's connections: HTTP requests go to Hummingbird's responder; a WebSocket upgrade to one of the
/// `endpoints`' paths becomes a pipeline of one handler of ours (``WebSocketSessionHandler``), which needs no task
/// while the connection lives.
///
/// Hummingbird's WebSocket layer runs every connection as a task reading an async stream, with its writer
/// flushing each frame; measured, that cost two thread hops and one `writev` per relayed frame and about 26 KB
/// per idle connection (see docs/architecture.md, "The data path").
struct WebSocketUpgradeChannel: ServerChildChannel, HTTPChannelHandler {
    /// What an accepted connection became.
    enum Outcome: Sendable {
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// An upgrade was asked for a path that has no WebSocket endpoint.
        case refusedUpgrade(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// Upgraded: the pipeline serves it from now on.
        case webSocket
    }

    struct Value: ServerChildChannelValue {
        let outcome: EventLoopFuture<Outcome>
        let channel: any Channel
    }

    let responder: Responder
    /// The WebSocket endpoints by path.
    let endpoints: [String: any SessionEndpoint]
    let flushers: LoopFlushers
    let httpIdleTimeout: Duration
    let maxHeadBytes: Int

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let upgradeAsked = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let upgrader = SessionUpgrader<Outcome>(
                shouldUpgrade: { channel, head in
                    upgradeAsked.value = true
                    return channel.eventLoop.makeSucceededFuture(endpoints[head.path] == nil ? nil : HTTPHeaders())
                },
                upgradePipelineHandler: { channel, head in
                    channel.eventLoop.makeCompletedFuture {
                        guard let endpoint = endpoints[head.path] else {
                            throw ChannelError.inappropriateOperationForState
                        }
                        try channel.pipeline.syncOperations.addHandler(
                            WebSocketSessionHandler(
                                endpoint: endpoint, flusher: flushers.flusher(for: channel.eventLoop)))
                        return Outcome.webSocket
                    }
                })
            let notUpgrading = { @Sendable (channel: any Channel) -> EventLoopFuture<Outcome> in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                    try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: httpIdleTimeout, logger: logger))
                    let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                        wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                    return upgradeAsked.value ? .refusedUpgrade(http) : .http(http)
                }
            }
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration(
                upgradeConfiguration: NIOTypedHTTPServerUpgradeConfiguration(
                    upgraders: [upgrader], notUpgradingCompletionHandler: notUpgrading))
            configuration.enablePipelining = false
            configuration.enableErrorHandling = false
            configuration.enableResponseHeaderValidation = false
            configuration.decoderConfiguration.maxHeaderFieldSize = maxHeadBytes
            configuration.decoderConfiguration.maxHeaderListSize = maxHeadBytes
            let outcome = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                configuration: configuration)
            return Value(outcome: outcome, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.outcome.get() {
            case .http(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .refusedUpgrade(let http):
                await refuse(http)
            case .webSocket:
                // The pipeline serves it: no task waits on a WebSocket connection.
                break
            }
        } catch {
            logger.debug("connection ended before its request was served", metadata: ["error": "\(error)"])
        }
    }

    /// Answers an upgrade to a path without a WebSocket endpoint: 400, and the connection closes.
    private func refuse(_ http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>) async {
        try? await http.executeThenClose { _, outbound in
            let head = HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
            try await outbound.write(contentsOf: [.head(head), .end(nil)])
        }
    }
}

/// NIO's WebSocket handshake (the checks of the upgrade request, the 101 answer's accept key) with our own pipeline
/// after it: NIO's upgrader would also add its frame decoder and encoder, which ``WebSocketSessionHandler``
/// replaces.
private struct SessionUpgrader<UpgradeResult: Sendable>: NIOTypedHTTPServerProtocolUpgrader {
    private let handshake: NIOTypedWebSocketServerUpgrader<UpgradeResult>
    private let upgradePipelineHandler: @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<UpgradeResult>

    init(
        shouldUpgrade: @escaping @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<HTTPHeaders?>,
        upgradePipelineHandler: @escaping @Sendable (any Channel, HTTPRequestHead) -> EventLoopFuture<UpgradeResult>
    ) {
        // Only the handshake is used: `upgrade` below builds the pipeline.
        handshake = NIOTypedWebSocketServerUpgrader(
            shouldUpgrade: shouldUpgrade, upgradePipelineHandler: upgradePipelineHandler)
        self.upgradePipelineHandler = upgradePipelineHandler
    }

    var supportedProtocol: String { handshake.supportedProtocol }
    var requiredUpgradeHeaders: [String] { handshake.requiredUpgradeHeaders }

    func buildUpgradeResponse(
        channel: any Channel, upgradeRequest: HTTPRequestHead, initialResponseHeaders: HTTPHeaders
    ) -> EventLoopFuture<HTTPHeaders> {
        handshake.buildUpgradeResponse(
            channel: channel, upgradeRequest: upgradeRequest, initialResponseHeaders: initialResponseHeaders)
    }

    func upgrade(channel: any Channel, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<UpgradeResult> {
        upgradePipelineHandler(channel, upgradeRequest)
    }
}

extension HTTPRequestHead {
    /// The request's path, without its query.
    fileprivate var path: String {
        uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? uri
    }
}
