@_spi(ServerShell) import CallAPIServerCore
import CallAPISignalProtocol
import Logging
import NIOCore

/// The RTC channel endpoint (`/v1/rtc`): runs ``ChannelState`` in an ``EndpointShell``, which has
/// ``ChannelHubPerformer`` perform its actions (writes, closes, the webhook, metrics, logs).
///
/// What is the endpoint's own: reading a frame from its text, and the operator's kick.
final class ChannelHub: SessionEndpoint {
    private let shell: EndpointShell<ChannelHubPerformer>
    private let logger: Logger
    let limits: ChannelLimits
    let maxMessageBytes: Int

    init(
        limits: ChannelLimits, ice: ICESettings, maxMessageBytes: Int, authority: TokenAuthority,
        clock: any SignalServerClock,
        metrics: ServerMetrics, webhook: WebhookNotifier?, homes: (any ChannelHomeKeeper)? = nil, logger: Logger
    ) {
        shell = EndpointShell(
            state: ChannelState(limits: limits, ice: ice, topology: homes == nil ? .single : .cluster),
            performer: ChannelHubPerformer(
                authority: authority, metrics: metrics, webhook: webhook, homes: homes, logger: logger),
            clock: clock, connectionMetrics: nil)
        self.limits = limits
        self.maxMessageBytes = maxMessageBytes
        self.logger = logger
    }

    /// When each socket open now closes (after any close frame).
    var connectionCloses: [EventLoopFuture<Void>] { shell.connectionCloses }
    /// Records the channels' gauges as they are now (before the metrics are rendered).
    func publishGauges() { shell.publishGauges() }

    /// The uids in `channel`, sorted, each once; and its members (uid and device) in join order.
    func members(of channel: String) -> (uids: [UInt], devices: [ChannelMember]) {
        shell.read { ($0.state.members(of: channel), $0.state.devices(of: channel)) }
    }

    func open(channel: any Channel, flusher: LoopFlusher) -> WebSocketConnection {
        shell.open(channel: channel, flusher: flusher)
    }

    func received(utf8 text: UnsafeBufferPointer<UInt8>, on id: SessionID, at instant: NIODeadline) -> Bool {
        // Channel frames are few (join, leave, notices): read from a `String`.
        received(Self.decode(String(decoding: text, as: UTF8.self), maxFrameBytes: limits.maxFrameBytes), on: id)
        return true
    }

    /// A received text, read and checked against the frame limit.
    enum DecodedMessage: Sendable {
        case frame(ChannelClientFrame)
        case undecodable(FrameDecodingError)
        case oversized(bytes: Int)
    }

    /// Reads `text` as a channel client frame, checking the size limit.
    static func decode(_ text: String, maxFrameBytes: Int) -> DecodedMessage {
        let bytes = text.utf8.count
        if bytes > maxFrameBytes { return .oversized(bytes: bytes) }
        switch ChannelFrameCoding.decodeClientFrame(text) {
        case .success(let frame): return .frame(frame)
        case .failure(let error): return .undecodable(error)
        }
    }

    /// A text message arrived on `id`, decoded with ``decode(_:maxFrameBytes:)``.
    func received(_ message: DecodedMessage, on id: SessionID) {
        switch message {
        case .frame(let frame): shell.handle(.frame(id, frame))
        case .undecodable(let error): shell.handle(.undecodable(id, error))
        case .oversized(let bytes): shell.handle(.oversized(id, bytes: bytes))
        }
    }

    func receivedBinary(on id: SessionID) {
        shell.receivedBinary(on: id)
    }

    func closed(_ id: SessionID) {
        shell.closed(id)
    }

    /// Kicks `uid` out of `channel` and bars it for `barSeconds` (0: no bar).
    func kick(channel: String, uid: UInt, barSeconds: Int, reason: String?) -> (kicked: Bool, barredUntil: Int64?) {
        logger.notice(
            "kick",
            metadata: ["channel": "\(channel)", "uid": "\(uid)", "bar": "\(barSeconds)", "reason": "\(reason ?? "")"])
        let now = shell.clock.nowMillis()
        var answer: (kicked: Bool, barredUntil: Int64?) = (false, nil)
        shell.apply(
            now: now,
            { core, actions in
                answer = core.state.kick(
                    channel: channel, uid: uid, barSeconds: barSeconds, reason: reason, now: now, into: &actions)
            }, answer: { _ in })
        return answer
    }

    /// Runs the time-based checks now.
    func tick() {
        shell.tick()
    }

    /// Ends every connection still open (shutdown, once the drain time is over).
    func abortRemaining() {
        shell.abortRemaining()
    }

    /// Tells every member the server is going away and closes them.
    func shutdown() {
        shell.shutdown()
    }
}
