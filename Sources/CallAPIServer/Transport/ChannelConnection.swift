import CallAPISignalProtocol
import HummingbirdWebSocket
import NIOWebSocket

/// Runs one WebSocket connection of the channel endpoint: a reader feeding the channel hub and a writer draining
/// the connection's outbox.
enum ChannelConnection {
    static func run(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, hub: ChannelHub, maxMessageBytes: Int
    ) async throws {
        // The connection ends when its reader or writer does, or when the hub aborts it (a slow consumer, whose
        // writer is stuck waiting for the socket): each of them signals `ended`.
        let (ended, end) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let (id, outbox) = await hub.open(abort: { end.yield() })
        let maxFrameBytes = await hub.limits.maxFrameBytes
        let writes = hub.writes
        let violation = await withTaskGroup(of: (any Error)?.self) { group in
            group.addTask {
                await write(outbox, to: outbound, connection: id, writes: writes)
                end.yield()
                return nil
            }
            group.addTask {
                let violation = await read(
                    inbound, connection: id, hub: hub, maxMessageBytes: maxMessageBytes, maxFrameBytes: maxFrameBytes)
                end.yield()
                return violation
            }
            // Whichever ends first (client closed, the hub closed or aborted the connection) ends the other.
            for await _ in ended { break }
            group.cancelAll()
            var violation: (any Error)?
            for await result in group where result != nil { violation = result }
            return violation
        }
        await hub.disconnected(id)
        // Rethrown so that WSCore closes with the code it carries (1007, 1009), as for signaling sessions.
        if let violation { throw violation }
    }

    private static func read(
        _ inbound: WebSocketInboundStream, connection id: SessionID, hub: ChannelHub, maxMessageBytes: Int,
        maxFrameBytes: Int
    ) async -> (any Error)? {
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
            // The socket failed or sent a protocol violation, which WSCore answers once the handler rethrows it.
            return error
        }
        return nil
    }

    private static func write(
        _ outbox: AsyncStream<ChannelOutbound>, to outbound: WebSocketOutboundWriter, connection id: SessionID,
        writes: WriteTally
    ) async {
        for await item in outbox {
            switch item {
            case .text(let text):
                do {
                    try await outbound.write(.text(text))
                } catch {
                    return
                }
                writes.wrote(id)
            case .close(let code):
                try? await outbound.close(.init(codeNumber: Int(code)), reason: nil)
                return
            }
        }
    }
}
