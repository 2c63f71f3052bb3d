import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// The server's connections: HTTP requests go to Hummingbird's responder; a WebSocket upgrade to one of the
/// `endpoints`' paths becomes a NIO pipeline of our own (frame decoder, ``WebSocketSessionHandler``), which
/// needs no task while the connection lives.
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
    /// The largest WebSocket frame read (larger ones close with 1009).
    let maxFrameBytes: Int
    let httpIdleTimeout: Duration
    let maxHeadBytes: Int

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let upgradeAsked = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let upgrader = NIOTypedWebSocketServerUpgrader<Outcome>(
                maxFrameSize: maxFrameBytes,
                // Our handler answers protocol errors with the close code each one deserves.
                enableAutomaticErrorHandling: false,
                shouldUpgrade: { channel, head in
                    upgradeAsked.value = true
                    let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
                    return channel.eventLoop.makeSucceededFuture(endpoints[path] == nil ? nil : HTTPHeaders())
                },
                upgradePipelineHandler: { channel, head in
                    channel.eventLoop.makeCompletedFuture {
                        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
                        guard let endpoint = endpoints[path] else { throw ChannelError.inappropriateOperationForState }
                        let pipeline = channel.pipeline.syncOperations
                        // Frames are written as bytes, encoded into one buffer per connection and tick, from a
                        // handler in front of NIO's frame encoder.
                        let encoder = try pipeline.handler(type: WebSocketFrameEncoder.self)
                        let writer = RawFrameWriter()
                        try pipeline.addHandler(writer, position: .before(encoder))
                        try pipeline.addHandler(
                            WebSocketSessionHandler(
                                endpoint: endpoint, writer: try pipeline.context(handler: writer),
                                flusher: flushers.flusher(for: channel.eventLoop)))
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

/// Sits in front of NIO's WebSocket frame encoder: ``WebSocketConnection`` writes already-encoded frames through
/// its context, so they skip the encoder.
final class RawFrameWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
}
