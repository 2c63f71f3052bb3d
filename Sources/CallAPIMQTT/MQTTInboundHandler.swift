import NIOCore

/// Hands each decoded packet, and the end of the connection, to its ``MQTTConnection``.
final class MQTTInboundHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = MQTTPacket

    private let connection: MQTTConnection

    init(connection: MQTTConnection) { self.connection = connection }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        connection.received(Self.unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.closed(MQTTClientError.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connection.closed(error)
        context.close(promise: nil)
    }
}
