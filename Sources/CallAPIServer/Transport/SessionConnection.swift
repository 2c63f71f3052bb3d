import CallAPISignalProtocol
import HummingbirdWebSocket
import Logging
import NIOWebSocket

/// Runs one WebSocket connection: a reader feeding the hub and a writer draining the session's outbox.
enum SessionConnection {
    /// Messages larger than this close the socket (1009) instead of getting a `too_large` answer.
    static func hardLimit(for limits: HubLimits) -> Int { max(limits.maxFrameBytes * 4, 1 << 20) }

    static func run(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, hub: SignalHub, metrics: ServerMetrics,
        maxMessageBytes: Int
    ) async {
        let (id, outbox) = await hub.open()
        let maxFrameBytes = await hub.limits.maxFrameBytes
        // One task besides the connection's own (each task costs memory on every idle connection): the reader is
        // the child, the writer runs here. When the client goes, the reader tells the hub, which finishes the
        // outbox and so ends the writer; when the writer ends first (the hub closed the session, or a write
        // failed), the reader is cancelled, and then tells the hub.
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await read(
                    inbound, session: id, hub: hub, maxMessageBytes: maxMessageBytes, maxFrameBytes: maxFrameBytes)
                await hub.disconnected(id)
            }
            await write(outbox, to: outbound, metrics: metrics)
            group.cancelAll()
        }
    }

    private static func read(
        _ inbound: WebSocketInboundStream, session id: SessionID, hub: SignalHub, maxMessageBytes: Int,
        maxFrameBytes: Int
    ) async {
        do {
            for try await message in inbound.messages(maxSize: maxMessageBytes) {
                switch message {
                case .text(let text):
                    let arrived = ContinuousClock.now
                    // Parsed here, concurrently with other sessions, rather than on the hub's actor.
                    let message = SignalHub.decode(text, maxFrameBytes: maxFrameBytes)
                    await hub.received(message, on: id, at: arrived)
                case .binary:
                    await hub.receivedBinary(on: id)
                }
            }
        } catch {
            // The socket failed or sent a protocol violation; WSCore has already answered with a close frame.
        }
    }

    private static func write(
        _ outbox: AsyncStream<Outbound>, to outbound: WebSocketOutboundWriter, metrics: ServerMetrics
    ) async {
        for await item in outbox {
            switch item {
            case .text(let text, let relayStartedAt):
                do {
                    try await outbound.write(.text(text))
                } catch {
                    return
                }
                if let relayStartedAt {
                    metrics.relayLatency(.now - relayStartedAt)
                }
            case .close(let code, let reason):
                try? await outbound.close(.init(codeNumber: Int(code)), reason: reason.rawValue)
                return
            }
        }
    }
}
