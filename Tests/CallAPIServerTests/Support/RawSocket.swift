import CallAPIServerTesting
import CallAPISignalProtocol
import Logging
import NIOCore
import NIOSSL
import NIOWebSocket
import WSClient

/// A bare WebSocket client for tests: sends any text, and reads the server's frames one by one.
final class RawSocket: Sendable {
    private let outgoing: AsyncStream<Outgoing>.Continuation
    private let incoming: AsyncStream<Incoming>
    private let iterator: IteratorBox
    private let task: Task<Void, Never>

    enum Outgoing: Sendable {
        case text(String)
        case binary([UInt8])
        case close
    }

    enum Incoming: Sendable {
        case text(String)
        case closed(code: Int?, reason: String?)
    }

    init(url: String, maxFrameSize: Int = 1 << 22, tls: TLSConfiguration? = nil) {
        let (outStream, outContinuation) = AsyncStream.makeStream(of: Outgoing.self)
        let (inStream, inContinuation) = AsyncStream.makeStream(of: Incoming.self)
        outgoing = outContinuation
        incoming = inStream
        iterator = IteratorBox(inStream)
        task = Task {
            var logger = Logger(label: "test.raw")
            logger.logLevel = .critical
            do {
                let close = try await WebSocketClient.connect(
                    url: url, configuration: .init(maxFrameSize: maxFrameSize), tlsConfiguration: tls, logger: logger
                ) { inbound, outbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await item in outStream {
                                switch item {
                                case .text(let text): try await outbound.write(.text(text))
                                case .binary(let bytes): try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
                                case .close:
                                    try await outbound.close(.normalClosure, reason: nil)
                                    return
                                }
                            }
                        }
                        for try await message in inbound.messages(maxSize: maxFrameSize) {
                            if case .text(let text) = message { inContinuation.yield(.text(text)) }
                        }
                        group.cancelAll()
                    }
                }
                inContinuation.yield(.closed(code: close.map { code(of: $0.closeCode) }, reason: close?.reason))
            } catch {
                inContinuation.yield(.closed(code: nil, reason: "\(error)"))
            }
            inContinuation.finish()
        }
    }

    deinit {
        outgoing.finish()
        task.cancel()
    }

    func send(_ frame: ClientFrame) { outgoing.yield(.text(FrameCoding.encode(frame))) }
    func sendText(_ text: String) { outgoing.yield(.text(text)) }
    func sendBinary(_ bytes: [UInt8]) { outgoing.yield(.binary(bytes)) }
    func close() { outgoing.yield(.close) }
    /// Drops the connection without a close handshake (the socket is simply lost).
    func abort() {
        outgoing.finish()
        task.cancel()
    }

    /// The next thing from the server.
    func next(timeout: Double = 5) async throws -> Incoming {
        let iterator = iterator
        return try await withTimeout(timeout, "a frame") {
            guard let item = await iterator.next() else { return .closed(code: nil, reason: "stream ended") }
            return item
        }
    }

    /// The next server frame, failing if the socket closes first.
    func frame(timeout: Double = 5) async throws -> ServerFrame {
        switch try await next(timeout: timeout) {
        case .text(let text): return try FrameCoding.decodeServerFrame(text).get()
        case .closed(let code, let reason): throw SocketClosed(code: code, reason: reason)
        }
    }

    /// Skips frames until one matches.
    func frame(timeout: Double = 5, where match: (ServerFrame) -> Bool) async throws -> ServerFrame {
        while true {
            let frame = try await self.frame(timeout: timeout)
            if match(frame) { return frame }
        }
    }

    /// Reads until the socket closes; returns the close code.
    func closed(timeout: Double = 5) async throws -> Int? {
        while true {
            if case .closed(let code, _) = try await next(timeout: timeout) { return code }
        }
    }

    /// Logs in and returns the welcome.
    @discardableResult
    func login(_ token: String, deviceId: String? = nil) async throws -> ServerFrame.Welcome {
        send(.login(.init(id: 1, token: token, deviceId: deviceId)))
        let frame = try await self.frame()
        guard case .welcome(let welcome) = frame else { throw UnexpectedFrame(frame: frame) }
        return welcome
    }
}

struct SocketClosed: Error {
    var code: Int?
    var reason: String?
}

struct UnexpectedFrame: Error {
    var frame: ServerFrame
}

private func code(of closeCode: WebSocketErrorCode) -> Int {
    var buffer = ByteBuffer()
    buffer.write(webSocketErrorCode: closeCode)
    return Int(buffer.readInteger(as: UInt16.self) ?? 0)
}

/// Lets a shared AsyncStream iterator be advanced from async test code.
private actor IteratorBox {
    var iterator: AsyncStream<RawSocket.Incoming>.AsyncIterator
    init(_ stream: AsyncStream<RawSocket.Incoming>) { iterator = stream.makeAsyncIterator() }
    func next() async -> RawSocket.Incoming? {
        // The iterator is a reference to the stream's storage, so advancing a copy advances it.
        var copy = iterator
        let item = await copy.next(isolation: self)
        iterator = copy
        return item
    }
}
