import CallAPISignalProtocol
import Logging

/// What a channel connection's writer task writes next.
enum ChannelOutbound: Sendable {
    /// A frame's text.
    case text(String)
    /// Close the socket.
    case close(code: UInt16)
}

/// The channels' shell: runs ``ChannelState`` and performs its actions (writes, closes, token checks, webhook,
/// metrics, logs).
actor ChannelHub {
    private var state: ChannelState
    private let authority: TokenAuthority
    private let clock: any SignalServerClock
    private let metrics: ServerMetrics
    private let webhook: WebhookNotifier?
    private let logger: Logger
    private var outboxes: [SessionID: ConnectionOutbox] = [:]
    /// Frames the writers wrote, fed to the state before each event.
    nonisolated let writes = WriteTally()

    /// A connection's outbox, and how to stop the connection at once (a slow consumer's writer is stuck).
    private struct ConnectionOutbox {
        var continuation: AsyncStream<ChannelOutbound>.Continuation
        var abort: @Sendable () -> Void
    }
    private var nextConnectionNumber: UInt64 = 1

    init(
        limits: ChannelLimits, authority: TokenAuthority, clock: any SignalServerClock, metrics: ServerMetrics,
        webhook: WebhookNotifier?, logger: Logger
    ) {
        state = ChannelState(limits: limits)
        self.authority = authority
        self.clock = clock
        self.metrics = metrics
        self.webhook = webhook
        self.logger = logger
    }

    var limits: ChannelLimits { state.limits }
    /// Sockets still open (until their connection task ends, after any close).
    var openSocketCount: Int { outboxes.count }

    /// The uids in `channel`, sorted.
    func members(of channel: String) -> [UInt] { state.members(of: channel) }

    /// Registers a new connection; its writer reads the returned stream (bounded by the state's outbox limits)
    /// and counts what it writes in ``writes``; `abort` ends the connection without waiting for its writer.
    func open(abort: @escaping @Sendable () -> Void) -> (SessionID, AsyncStream<ChannelOutbound>) {
        let id = SessionID(nextConnectionNumber)
        nextConnectionNumber += 1
        let (stream, continuation) = AsyncStream.makeStream(of: ChannelOutbound.self)
        outboxes[id] = ConnectionOutbox(continuation: continuation, abort: abort)
        handle(.connected(id, now: clock.nowMillis()))
        return (id, stream)
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

    /// A text message arrived on `id`, decoded by the connection with ``decode(_:maxFrameBytes:)``.
    func received(_ message: DecodedMessage, on id: SessionID) {
        let now = clock.nowMillis()
        switch message {
        case .frame(let frame): handle(.frame(id, frame, now: now))
        case .undecodable(let error): handle(.undecodable(id, error, now: now))
        case .oversized(let bytes): handle(.oversized(id, bytes: bytes, now: now))
        }
    }

    /// A binary message arrived on `id`.
    func receivedBinary(on id: SessionID) {
        handle(.binary(id, now: clock.nowMillis()))
    }

    /// The connection closed.
    func disconnected(_ id: SessionID) {
        handle(.disconnected(id, now: clock.nowMillis()))
        outboxes.removeValue(forKey: id)?.continuation.finish()
    }

    /// Kicks `uid` out of `channel` and bars it for `barSeconds` (0: no bar).
    func kick(channel: String, uid: UInt, barSeconds: Int, reason: String?) -> (kicked: Bool, barredUntil: Int64?) {
        logger.notice(
            "kick",
            metadata: ["channel": "\(channel)", "uid": "\(uid)", "bar": "\(barSeconds)", "reason": "\(reason ?? "")"])
        let actions = handle(
            .kick(channel: channel, uid: uid, barSeconds: barSeconds, reason: reason, now: clock.nowMillis()))
        for case .kickAnswered(let kicked, let barredUntil) in actions {
            return (kicked, barredUntil)
        }
        return (false, nil)
    }

    /// Runs the time-based checks now.
    func tick() {
        handle(.tick(now: clock.nowMillis()))
    }

    /// Tells every member the server is going away and closes them.
    func shutdown() {
        handle(.shutdown(now: clock.nowMillis()))
    }

    @discardableResult
    private func handle(_ event: ChannelEvent) -> [ChannelAction] {
        for (id, frames) in writes.drain() {
            _ = state.handle(.written(id, frames: frames))
        }
        let actions = state.handle(event)
        for action in actions {
            perform(action)
        }
        metrics.updateChannels(
            open: state.channelCount, members: state.memberCount, queuedFrames: state.queuedFrames,
            queuedBytes: state.queuedBytes)
        return actions
    }

    private func perform(_ action: ChannelAction) {
        switch action {
        case .send(let id, let frame):
            observe(frame, connection: id)
            outboxes[id]?.continuation.yield(.text(ChannelFrameCoding.encode(frame)))
        case .close(let id, let code):
            metrics.channelClosed(code: code)
            guard let outbox = outboxes[id] else { return }
            if code == ChannelErrorCode.slowConsumer.closeCode {
                // Its writer is stuck behind the backlog: end the connection instead of queueing a close.
                logger.warning("slow consumer closed", metadata: ["connection": "\(id)"])
                outbox.abort()
            } else {
                outbox.continuation.yield(.close(code: code))
                // As for sessions: a client that does not read is ended after a grace period.
                let abort = outbox.abort
                Task {
                    try? await Task.sleep(for: SignalHub.closeGrace)
                    abort()
                }
            }
        case .verifyToken(let id, let token, let purpose):
            let authority = authority
            Task {
                let result = await authority.checkChannelToken(token)
                self.tokenChecked(id, purpose: purpose, result: result)
            }
        case .report(let notice):
            report(notice)
        case .kickAnswered:
            break
        }
    }

    private func tokenChecked(_ id: SessionID, purpose: ChannelTokenPurpose, result: ChannelTokenCheck) {
        handle(.tokenChecked(id, purpose: purpose, result: result, now: clock.nowMillis()))
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

    private func observe(_ frame: ChannelServerFrame, connection id: SessionID) {
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
