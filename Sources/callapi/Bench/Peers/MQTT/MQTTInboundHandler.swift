import NIOCore

/// Hands each decoded packet, and the end of the connection, to an ``MQTTSignalClient``.
final class MQTTInboundHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = MQTTPacket

    private let client: MQTTSignalClient

    init(client: MQTTSignalClient) { self.client = client }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        client.received(Self.unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        client.closed(MQTTClientError.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        client.closed(error)
        context.close(promise: nil)
    }
}
