import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// The mock reachable over HTTP/2 with TLS on 127.0.0.1, as APNs and FCM are: point the server's provider
/// endpoints at ``baseURL`` and trust ``certificatePEM``.
public final class PushMockServer: Sendable {
    public let mock: PushMock
    public let port: Int
    /// The self-signed certificate the server presents (PEM), made when it started.
    public let certificatePEM: String
    private let channel: any Channel

    /// `https://127.0.0.1:<port>`.
    public var baseURL: String { "https://127.0.0.1:\(port)" }
    /// The FCM token endpoint on this mock.
    public var tokenURL: String { baseURL + PushMock.tokenPath }

    private init(mock: PushMock, port: Int, certificatePEM: String, channel: any Channel) {
        self.mock = mock
        self.port = port
        self.certificatePEM = certificatePEM
        self.channel = channel
    }

    /// Starts listening on 127.0.0.1 (`port` 0 picks a free one).
    public static func start(_ mock: PushMock, port: Int = 0) async throws -> PushMockServer {
        let certificate = try MockCertificate.make()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificate.certificate)], privateKey: .privateKey(certificate.privateKey))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    channel.configureHTTP2Pipeline(mode: .server) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandlers([
                                HTTP2FramePayloadToHTTP1ServerCodec(), MockRequestHandler(mock: mock),
                            ])
                        }
                    }.map { _ in }
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        return PushMockServer(
            mock: mock, port: channel.localAddress?.port ?? 0, certificatePEM: certificate.pem, channel: channel)
    }

    /// Stops listening.
    public func stop() async {
        try? await channel.close()
    }
}

/// Reads one request on an HTTP/2 stream and answers it from the mock.
private final class MockRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let mock: PushMock
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(mock: PushMock) {
        self.mock = mock
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            self.head = nil
            if head.uri.hasPrefix(MockDeviceInbox.pathPrefix) {
                // A phone waiting for its next push: answered when it comes, off the event loop meanwhile.
                let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
                let promise = context.eventLoop.makePromise(of: PushMock.Response.self)
                let (devices, uri) = (mock.devices, head.uri)
                promise.completeWithTask { await devices.answer(uri) }
                promise.futureResult.whenSuccess { response in
                    bound.value.handler.write(response, version: head.version, context: bound.value.context)
                }
                return
            }
            var headers: [String: String] = [:]
            for (name, value) in head.headers { headers[name.lowercased()] = value }
            let response = mock.handle(
                .init(
                    method: head.method.rawValue, path: head.uri, headers: headers,
                    body: String(buffer: body), httpMajorVersion: head.version.major))
            write(response, version: head.version, context: context)
        }
    }

    private func write(_ response: PushMock.Response, version: HTTPVersion, context: ChannelHandlerContext) {
        var responseHeaders = HTTPHeaders()
        for (name, value) in response.headers { responseHeaders.add(name: name, value: value) }
        if response.status != 204 {
            responseHeaders.add(name: "content-length", value: String(response.body.utf8.count))
        }
        context.write(
            wrapOutboundOut(
                .head(
                    HTTPResponseHead(
                        version: version, status: .init(statusCode: response.status), headers: responseHeaders))),
            promise: nil)
        if !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: response.body)))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
