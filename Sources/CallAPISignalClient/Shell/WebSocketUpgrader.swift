import NIOCore
import NIOHTTP1
import NIOWebSocket

/// The client's WebSocket upgrade: NIO's upgrader makes the request's key and checks the server's accept, and the
/// upgraded pipeline is built here, without the frame decoder and encoder NIO would add: one handler reads the
/// frames (``ServerFrameReader``) and writes them (``MaskedFrame``); docs/benchmarks.md has what NIO's cost.
struct WebSocketUpgrader: NIOHTTPClientProtocolUpgrader {
    private let checks: NIOWebSocketClientUpgrader
    private let upgraded: (any Channel) throws -> Void

    /// `upgraded` adds the handler that reads the frames; it runs on the channel's loop, before any byte that
    /// followed the 101 is handed on.
    init(upgraded: @escaping (any Channel) throws -> Void) {
        // Only its key and its check of the response are used; its pipeline handler never runs.
        checks = NIOWebSocketClientUpgrader(automaticErrorHandling: false) { channel, _ in
            channel.eventLoop.makeSucceededVoidFuture()
        }
        self.upgraded = upgraded
    }

    var supportedProtocol: String { checks.supportedProtocol }
    var requiredUpgradeHeaders: [String] { checks.requiredUpgradeHeaders }

    func addCustom(upgradeRequestHeaders: inout HTTPHeaders) {
        checks.addCustom(upgradeRequestHeaders: &upgradeRequestHeaders)
    }

    func shouldAllowUpgrade(upgradeResponse: HTTPResponseHead) -> Bool {
        checks.shouldAllowUpgrade(upgradeResponse: upgradeResponse)
    }

    func upgrade(context: ChannelHandlerContext, upgradeResponse: HTTPResponseHead) -> EventLoopFuture<Void> {
        let channel = context.channel
        return channel.eventLoop.makeCompletedFuture {
            try upgraded(channel)
        }
    }
}
