import CallAPISignalProtocol
import HummingbirdWebSocket
import NIOWebSocket

/// Runs one WebSocket connection of the channel endpoint: a reader feeding the channel hub and a writer draining
/// the connection's outbox.
enum ChannelConnection {
    static func run(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, hub: ChannelHub, maxMessageBytes: Int
    ) async {
        let (id, outbox) = await hub.open()
        let maxFrameBytes = await hub.limits.maxFrameBytes
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await write(outbox, to: outbound)
            }
            group.addTask {
                await read(
                    inbound, connection: id, hub: hub, maxMessageBytes: maxMessageBytes, maxFrameBytes: maxFrameBytes)
            }
            // Whichever side ends first (client closed, or the hub closed the connection) ends the other.
            await group.next()
            group.cancelAll()
        }
        await hub.disconnected(id)
    }

    private static func read(
        _ inbound: WebSocketInboundStream, connection id: SessionID, hub: ChannelHub, maxMessageBytes: Int,
        maxFrameBytes: Int
    ) async {
        do {
            for try await message in inbound.messages(maxSize: maxMessageBytes) {
                switch message {
                case .text(let text):
                    await hub.received(ChannelHub.decode(text, maxFrameBytes: maxFrameBytes), on: id)
                case .binary:
                    await hub.receivedBinary(on: id)
                }
            }
        } catch {
            // The socket failed or sent a protocol violation; WSCore has already answered with a close frame.
        }
    }

    private static func write(_ outbox: AsyncStream<ChannelOutbound>, to outbound: WebSocketOutboundWriter) async {
        for await item in outbox {
            switch item {
            case .text(let text):
                do {
                    try await outbound.write(.text(text))
                } catch {
                    return
                }
            case .close(let code):
                try? await outbound.close(.init(codeNumber: Int(code)), reason: nil)
                return
            }
        }
    }
}
