import CallAPIServerCore
import CallAPISignalProtocol
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The channels' shell: runs ``ChannelState`` and performs its actions (writes, closes, token checks, webhook,
/// metrics, logs).
///
/// Like ``SignalHub``, it runs on the event loop that read the frame, under a lock, and queues what it sends on
/// the receivers' ``WebSocketConnection``s.
final class ChannelHub: SessionEndpoint {
    private struct Core {
        var state: ChannelState
        var connections = ConnectionRegistry()
    }

    private let core: NIOLockedValueBox<Core>
    private let authority: TokenAuthority
    private let clock: any SignalServerClock
    private let metrics: ServerMetrics
    private let webhook: WebhookNotifier?
    private let logger: Logger
    /// Frames the connections wrote, fed to the state before each event.
    let writes = WriteTally()
    let limits: ChannelLimits
    let maxMessageBytes: Int

    init(
        limits: ChannelLimits, maxMessageBytes: Int, authority: TokenAuthority, clock: any SignalServerClock,
        metrics: ServerMetrics, webhook: WebhookNotifier?, logger: Logger
    ) {
        core = NIOLockedValueBox(Core(state: ChannelState(limits: limits)))
        self.limits = limits
        self.maxMessageBytes = maxMessageBytes
        self.authority = authority
        self.clock = clock
        self.metrics = metrics
        self.webhook = webhook
        self.logger = logger
    }

    /// When each socket open now closes (after any close frame).
    var connectionCloses: [EventLoopFuture<Void>] { core.withLockedValue { $0.connections.closes } }

    /// The uids in `channel`, sorted.
    func members(of channel: String) -> [UInt] { core.withLockedValue { $0.state.members(of: channel) } }

    func open(channel: any Channel, flusher: LoopFlusher) -> WebSocketConnection {
        let now = clock.nowMillis()
        var opened: WebSocketConnection?
        handle(now: now) { core in
            let connection = core.connections.open(channel: channel, flusher: flusher, tally: writes, metrics: nil)
            opened = connection
            return .connected(connection.id)
        }
        // Set by the closure above, which always runs.
        return opened!
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
        let now = clock.nowMillis()
        switch message {
        case .frame(let frame): handle(.frame(id, frame), now: now)
        case .undecodable(let error): handle(.undecodable(id, error), now: now)
        case .oversized(let bytes): handle(.oversized(id, bytes: bytes), now: now)
        }
    }

    func receivedBinary(on id: SessionID) {
        handle(.binary(id), now: clock.nowMillis())
    }

    func closed(_ id: SessionID) {
        let now = clock.nowMillis()
        handle(now: now) { core in
            core.connections.remove(id)
            return .disconnected(id)
        }
    }

    /// Kicks `uid` out of `channel` and bars it for `barSeconds` (0: no bar).
    func kick(channel: String, uid: UInt, barSeconds: Int, reason: String?) -> (kicked: Bool, barredUntil: Int64?) {
        logger.notice(
            "kick",
            metadata: ["channel": "\(channel)", "uid": "\(uid)", "bar": "\(barSeconds)", "reason": "\(reason ?? "")"])
        let actions = handle(
            .kick(channel: channel, uid: uid, barSeconds: barSeconds, reason: reason), now: clock.nowMillis())
        for case .kickAnswered(let kicked, let barredUntil) in actions {
            return (kicked, barredUntil)
        }
        return (false, nil)
    }

    /// Runs the time-based checks now.
    func tick() {
        handle(.tick, now: clock.nowMillis())
    }

    /// Ends every connection still open (shutdown, once the drain time is over).
    func abortRemaining() {
        for connection in core.withLockedValue({ Array($0.connections.connections.values) }) { connection.abort() }
    }

    /// Tells every member the server is going away and closes them.
    func shutdown() {
        handle(.shutdown, now: clock.nowMillis())
    }

    @discardableResult
    private func handle(_ event: ChannelEvent, now: Int64) -> [ChannelAction] {
        handle(now: now) { _ in event }
    }

    /// Under the lock: `prepare` registers what the event needs and names it, the state handles it at `now` and its
    /// actions are performed in order. Token checks start, and the webhook is told, once the lock is released.
    @discardableResult
    private func handle(now: Int64, _ prepare: (inout Core) -> ChannelEvent) -> [ChannelAction] {
        let actions = core.withLockedValue { core -> [ChannelAction] in
            writes.drain { id, frames in _ = core.state.handle(.written(id, frames: frames), now: now) }
            let event = prepare(&core)
            let actions = core.state.handle(event, now: now)
            for action in actions {
                perform(action, in: core)
            }
            metrics.updateChannels(
                open: core.state.channelCount, members: core.state.memberCount, queuedFrames: core.state.queuedFrames,
                queuedBytes: core.state.queuedBytes)
            return actions
        }
        for action in actions {
            switch action {
            case .verifyToken(let id, let token, let purpose):
                let authority = authority
                Task {
                    let result = await authority.checkChannelToken(token)
                    handle(.tokenChecked(id, purpose: purpose, result: result), now: clock.nowMillis())
                }
            case .report(let notice):
                report(notice)
            default:
                break
            }
        }
        return actions
    }

    private func perform(_ action: ChannelAction, in core: Core) {
        switch action {
        case .send(let id, let frame):
            observe(frame, connection: id, state: core.state)
            core.connections[id]?.send(text: ChannelFrameCoding.encode(frame))
        case .close(let id, let code):
            metrics.channelClosed(code: code)
            guard let connection = core.connections[id] else { return }
            if code == ChannelErrorCode.slowConsumer.closeCode {
                // Its socket is stuck behind the backlog: end the connection instead of queueing a close.
                logger.warning("slow consumer closed", metadata: ["connection": "\(id)"])
                connection.abort()
            } else {
                connection.close(code: code, reason: nil)
                // As for sessions: a client that does not read is ended after a grace period.
                let channel = connection.channel
                channel.eventLoop.scheduleTask(in: SignalHub.closeGrace) { channel.close(promise: nil) }
            }
        case .verifyToken, .report, .kickAnswered:
            // After the lock is released (see handle).
            break
        }
    }

    private func report(_ notice: ChannelNotice) {
        let metadata: Logger.Metadata = [
            "channel": "\(notice.channel)", "uid": "\(notice.uid)", "reason": "\(notice.reason.rawValue)",
        ]
        switch notice.reason {
        case .kicked:
            metrics.channelKick()
            logger.notice("channel member kicked", metadata: metadata)
        case .watchdog:
            metrics.channelWatchdogRemoval()
            logger.warning("channel watchdog removed a member left alone", metadata: metadata)
        default:
            logger.info(
                notice.event == .userJoined ? "channel member joined" : "channel member left", metadata: metadata)
        }
        webhook?.post(notice)
    }

    private func observe(_ frame: ChannelServerFrame, connection id: SessionID, state: ChannelState) {
        let who: Logger.Metadata = {
            guard let member = state.member(id) else { return ["connection": "\(id)"] }
            return ["connection": "\(id)", "channel": "\(member.channel)", "uid": "\(member.uid)"]
        }()
        switch frame {
        case .signal:
            metrics.channelSignalRelayed()
        case .joinFailed(let failure):
            logger.notice(
                "channel join refused",
                metadata: who.merging(["code": "\(failure.code)", "detail": "\(failure.message)"]) { $1 })
        case .error(let failure):
            logger.notice(
                "channel frame refused",
                metadata: who.merging(["code": "\(failure.code)", "detail": "\(failure.message)"]) { $1 })
        case .signalFailed(let failed):
            logger.info("channel signal not relayed", metadata: who.merging(["to": "\(failed.to)"]) { $1 })
        default:
            break
        }
    }
}
