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
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await write(outbox, to: outbound, metrics: metrics)
            }
            group.addTask {
                await read(
                    inbound, session: id, hub: hub, maxMessageBytes: maxMessageBytes, maxFrameBytes: maxFrameBytes)
            }
            // Whichever side ends first (client closed, or the hub closed the session) ends the other.
            await group.next()
            group.cancelAll()
        }
        await hub.disconnected(id)
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
