import NIOCore

/// Where a ``ClientSocket`` writes its text frames, already framed and masked (``MaskedTextFrame``): it sits
/// between the socket (or TLS) and the WebSocket encoder NIO adds at the upgrade, so those frames skip that
/// encoder. Everything else passes through unchanged. Confined to the channel's event loop.
final class TextFrameWriter: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Writes `frame` (a whole WebSocket frame) towards the socket and flushes.
    func writeAndFlush(_ frame: ByteBuffer) {
        context?.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }
}
