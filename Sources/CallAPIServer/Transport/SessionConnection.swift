import CallAPISignalProtocol
import HummingbirdWebSocket
import Logging
import NIOWebSocket

/// Runs one WebSocket connection: a reader feeding the hub and a writer draining the session's outbox.
enum SessionConnection {
    /// The hub closed the session: its reader stops reading (a flooder's frames would cost the hub for nothing).
    struct ClosedByHub: Error {}

    /// Messages larger than this close the socket (1009) instead of getting a `too_large` answer.
    static func hardLimit(for limits: HubLimits) -> Int { max(limits.maxFrameBytes * 4, 1 << 20) }

    static func run(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, hub: SignalHub, metrics: ServerMetrics,
        maxMessageBytes: Int
    ) async throws {
        // The connection ends when its reader or writer does, or when the hub aborts it (a slow consumer, whose
        // writer is stuck waiting for the socket): each of them signals `ended`.
        let (ended, end) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let (id, outbox) = await hub.open(abort: { end.yield() })
        let maxFrameBytes = await hub.limits.maxFrameBytes
        let writes = hub.writes
        // When the client goes, the reader tells the hub, which finishes the outbox and so ends the writer; when
        // the writer ends first (the hub closed the session, or a write failed) or the hub aborts, both are
        // cancelled, and the reader then tells the hub.
        let violation = await withTaskGroup(of: (any Error)?.self) { group in
            group.addTask {
                let violation = await read(
                    inbound, session: id, hub: hub, maxMessageBytes: maxMessageBytes, maxFrameBytes: maxFrameBytes)
                await hub.disconnected(id)
                if violation is ClosedByHub { return nil }
                end.yield()
                return violation
            }
            group.addTask {
                await write(outbox, to: outbound, session: id, writes: writes, metrics: metrics)
                end.yield()
                return nil
            }
            for await _ in ended { break }
            group.cancelAll()
            var violation: (any Error)?
            for await result in group where result != nil { violation = result }
            return violation
        }
        // Rethrown so that WSCore closes with the code it carries (1007 for text that is not UTF-8, 1009 for a
        // message over the limit); caught inside, it would close with 1000.
        if let violation { throw violation }
    }

    private static func read(
        _ inbound: WebSocketInboundStream, session id: SessionID, hub: SignalHub, maxMessageBytes: Int,
        maxFrameBytes: Int
    ) async -> (any Error)? {
        do {
            for try await message in inbound.messages(maxSize: maxMessageBytes) {
                switch message {
                case .text(let text):
                    let arrived = ContinuousClock.now
                    // Parsed here, concurrently with other sessions, rather than on the hub's actor.
                    let message = SignalHub.decode(text, maxFrameBytes: maxFrameBytes)
                    // A session the hub has closed (a flooder, say) is not read any further.
                    guard await hub.received(message, on: id, at: arrived) else { throw ClosedByHub() }
                case .binary:
                    await hub.receivedBinary(on: id)
                }
            }
        } catch is ClosedByHub {
            // Not read further; the writer writes what is queued and the close, then ends the connection.
            return ClosedByHub()
        } catch {
            // The socket failed or sent a protocol violation, which WSCore answers once the handler rethrows it.
            return error
        }
        return nil
    }

    private static func write(
        _ outbox: AsyncStream<Outbound>, to outbound: WebSocketOutboundWriter, session id: SessionID,
        writes: WriteTally, metrics: ServerMetrics
    ) async {
        for await item in outbox {
            switch item {
            case .text(let text, let relayStartedAt):
                do {
                    try await outbound.write(.text(text))
                } catch {
                    return
                }
                writes.wrote(id)
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
