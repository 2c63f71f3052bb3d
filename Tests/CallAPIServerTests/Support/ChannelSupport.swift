import CallAPIServer
import CallAPIServerCore
import CallAPIServerTesting
import CallAPISignalClient
import CallAPISignalProtocol
import Foundation
import Logging

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TestServer {
    /// The channel endpoint.
    var rtcURL: String { "ws://127.0.0.1:\(port)/v1/rtc" }

    /// An RTC token for `uid` in `channel`.
    func rtcToken(_ uid: UInt, channel: String, ttl: Int = 3600) async throws -> String {
        try await server.authority.issue(userId: String(uid), ttlSeconds: ttl, channel: channel).token
    }

    /// A raw socket that joined `channel` as `uid`; fails unless the answer is `joined`.
    func joined(_ uid: UInt, device: String? = nil, channel: String) async throws -> (
        RawSocket, ChannelServerFrame.Joined
    ) {
        let socket = RawSocket(url: rtcURL)
        let answer = try await socket.join(
            channel: channel, uid: uid, device: device, token: try await rtcToken(uid, channel: channel))
        guard case .joined(let joined) = answer else { throw UnexpectedChannelFrame(frame: answer) }
        return (socket, joined)
    }

    /// An admin HTTP request to the server.
    func admin(_ method: String, _ path: String, body: String? = nil, key: String = "test-admin-key") async throws
        -> (Int, String)
    {
        try await httpRequest(
            "\(httpBase)\(path)", method: method,
            headers: ["Authorization": "Bearer \(key)", "Content-Type": "application/json"], body: body)
    }
}

struct UnexpectedChannelFrame: Error {
    var frame: ChannelServerFrame
}

/// A plain HTTP request; returns the status and body.
func httpRequest(_ url: String, method: String = "GET", headers: [String: String] = [:], body: String? = nil)
    async throws -> (Int, String)
{
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = method
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    request.httpBody = body.map { Data($0.utf8) }
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
}

extension RawSocket {
    func send(_ frame: ChannelClientFrame) { sendText(ChannelFrameCoding.encode(frame)) }

    /// Sends `join` and returns the server's answer.
    func join(channel: String, uid: UInt, device: String? = nil, token: String) async throws -> ChannelServerFrame {
        send(.join(.init(channel: channel, uid: uid, token: token, device: device)))
        return try await channelFrame()
    }

    /// The next channel frame, failing if the socket closes first.
    func channelFrame(timeout: Double = 5) async throws -> ChannelServerFrame {
        switch try await next(timeout: timeout) {
        case .text(let text): return try ChannelFrameCoding.decodeServerFrame(text).get()
        case .closed(let code, let reason): throw SocketClosed(code: code, reason: reason)
        }
    }

    /// Skips channel frames until one matches.
    func channelFrame(timeout: Double = 5, where match: (ChannelServerFrame) -> Bool) async throws
        -> ChannelServerFrame
    {
        while true {
            let frame = try await channelFrame(timeout: timeout)
            if match(frame) { return frame }
        }
    }
}

/// Collects an ``RTCChannelConnection``'s events.
final class ChannelEventRecorder: Sendable {
    let events: AsyncStream<RTCChannelClientEvent>
    private let continuation: AsyncStream<RTCChannelClientEvent>.Continuation

    init() { (events, continuation) = AsyncStream.makeStream() }

    var handler: @Sendable (RTCChannelClientEvent) -> Void {
        { [continuation] in continuation.yield($0) }
    }

    /// The next event.
    func next(within seconds: Double = 5) async throws -> RTCChannelClientEvent {
        try await events.first(within: seconds, "a channel event") { _ in true }
    }
}

/// A log handler that streams the messages logged through it (for waiting on something only logged).
struct StreamingLogHandler: LogHandler {
    let continuation: AsyncStream<String>.Continuation
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        continuation.yield(event.message.description)
    }

    /// A logger whose messages arrive on the returned stream.
    static func logger() -> (Logger, AsyncStream<String>) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        return (Logger(label: "test.stream") { _ in StreamingLogHandler(continuation: continuation) }, stream)
    }
}
