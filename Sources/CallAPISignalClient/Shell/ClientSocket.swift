import Logging
import NIOCore
import NIOWebSocket
import WSClient

/// What a ``ClientSocket`` reports to: the signaling client's core, or an RTC channel connection's.
protocol ClientSocketDelegate: Actor {
    func socketOpened(_ socket: Int)
    func received(_ text: String, socket: Int)
    func socketClosed(_ socket: Int, cause: String)
}

/// One WebSocket connection to the server. Reports what happens to its delegate and writes what it is given.
final class ClientSocket: Sendable {
    let id: Int
    private let outbox: AsyncStream<Outgoing>.Continuation
    private let task: Task<Void, Never>

    enum Outgoing: Sendable {
        case text(String)
        case close
    }

    init(id: Int, url: String, core: any ClientSocketDelegate, logger: Logger) {
        self.id = id
        let (stream, outbox) = AsyncStream.makeStream(of: Outgoing.self)
        self.outbox = outbox
        task = Task {
            let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 22, closeTimeout: .seconds(1))
            do {
                let close = try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) {
                    inbound, outbound, _ in
                    await core.socketOpened(id)
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await item in stream {
                                switch item {
                                case .text(let text):
                                    try await outbound.write(.text(text))
                                case .close:
                                    try await outbound.close(.normalClosure, reason: nil)
                                    return
                                }
                            }
                        }
                        for try await message in inbound.messages(maxSize: 1 << 22) {
                            if case .text(let text) = message {
                                await core.received(text, socket: id)
                            }
                        }
                        group.cancelAll()
                    }
                }
                let cause =
                    if let close { "the server closed the connection (\(close.reason ?? "\(close.closeCode)"))" } else {
                        "the connection closed"
                    }
                await core.socketClosed(id, cause: cause)
            } catch {
                await core.socketClosed(id, cause: "\(error)")
            }
        }
    }

    func write(_ text: String) { outbox.yield(.text(text)) }

    /// Closes politely, and forcibly if the server does not answer within a second.
    func close() {
        outbox.yield(.close)
        outbox.finish()
        let task = task
        Task {
            try? await Task.sleep(for: .seconds(1))
            task.cancel()
        }
    }

    /// Drops the connection at once (it is considered dead).
    func abort() {
        outbox.finish()
        task.cancel()
    }
}
