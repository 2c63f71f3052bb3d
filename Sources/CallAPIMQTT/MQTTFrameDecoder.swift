import NIOCore

/// Cuts the TCP byte stream into whole MQTT packets and decodes them with ``MQTTCodec``.
struct MQTTFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = MQTTPacket

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let header = buffer.readableBytesView.prefix(5)
        guard let size = try MQTTCodec.frameSize(header), buffer.readableBytes >= size,
            let frame = buffer.readBytes(length: size)
        else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(try MQTTCodec.decode(frame)))
        return .continue
    }
}
