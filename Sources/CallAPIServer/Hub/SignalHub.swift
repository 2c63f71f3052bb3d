import CallAPISignalProtocol
import Logging

/// What a session's writer task writes next.
enum Outbound: Sendable {
    /// A frame's text; `relayStartedAt` is when the relayed message arrived from its sender.
    case text(String, relayStartedAt: ContinuousClock.Instant?)
    /// Close the socket.
    case close(code: UInt16, reason: SignalErrorCode)
}

/// The hub's shell: runs ``HubState`` and performs its actions (writes, closes, token checks, metrics, logs).
actor SignalHub {
    private var state: HubState
    private let authority: TokenAuthority
    private let clock: any SignalServerClock
    private let metrics: ServerMetrics
    private let logger: Logger
    private var outboxes: [SessionID: SessionOutbox] = [:]
    /// Frames the writers wrote, fed to the state before each event.
    nonisolated let writes = WriteTally()

    /// A session's outbox, and how to stop its connection at once (a slow consumer's writer is stuck).
    private struct SessionOutbox {
        var continuation: AsyncStream<Outbound>.Continuation
        var abort: @Sendable () -> Void
    }
    private var nextSessionNumber: UInt64 = 1
    /// How long a closed session's writer may take to write what is queued and the close frame.
    static let closeGrace: Duration = .seconds(5)
    /// Tasks checking tokens, awaited on shutdown.
    private var pendingChecks = 0

    init(
        limits: HubLimits, authority: TokenAuthority, clock: any SignalServerClock, metrics: ServerMetrics,
        logger: Logger
    ) {
        state = HubState(limits: limits)
        self.authority = authority
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    var limits: HubLimits { state.limits }
    var onlineUsers: [String] { state.onlineUsers }
    var sessionCount: Int { state.sessionCount }
    /// Connections whose reader has not ended yet. A closed session leaves the state at once, but its connection
    /// stays open until its writer has written the close and the client has gone; shutdown drains these.
    var openConnectionCount: Int { outboxes.count }

    /// Registers a new connection; its writer reads the returned stream (bounded by the state's outbox limits)
    /// and counts what it writes in ``writes``; `abort` ends the connection without waiting for its writer.
    func open(abort: @escaping @Sendable () -> Void) -> (SessionID, AsyncStream<Outbound>) {
        let id = SessionID(nextSessionNumber)
        nextSessionNumber += 1
        let (stream, continuation) = AsyncStream.makeStream(of: Outbound.self)
        outboxes[id] = SessionOutbox(continuation: continuation, abort: abort)
        logger.debug("connection opened", metadata: ["session": "\(id)"])
        handle(.connected(id, now: clock.nowMillis()))
        return (id, stream)
    }

    /// A text message arrived on `id`, decoded by the connection (off the hub's actor) as ``decode(_:)`` does.
    /// Returns whether the session is still open: once the hub has closed it, its reader stops reading.
    @discardableResult
    func received(_ message: DecodedMessage, on id: SessionID, at instant: ContinuousClock.Instant) -> Bool {
        let now = clock.nowMillis()
        switch message {
        case .oversized(let bytes, let requestId, let isSend):
            handle(.oversized(id, bytes: bytes, requestId: requestId, isSend: isSend, now: now))
        case .frame(let frame):
            handle(.frame(id, frame, now: now), relayStartedAt: instant)
        case .undecodable(let error):
            handle(.undecodable(id, error, now: now))
        }
        return state.sessions[id] != nil
    }

    /// A received text, read and checked against the frame limit.
    enum DecodedMessage: Sendable {
        case frame(ClientFrame)
        case undecodable(FrameDecodingError)
        case oversized(bytes: Int, requestId: Int?, isSend: Bool)
    }

    /// Reads `text` as a client frame, checking the size limit.
    static func decode(_ text: String, maxFrameBytes: Int) -> DecodedMessage {
        let bytes = text.utf8.count
        // Size before parse: an oversized frame is refused from a look at its first bytes, never parsed.
        if bytes > maxFrameBytes {
            let head = FrameHeadPeek(text)
            return .oversized(bytes: bytes, requestId: head.requestId, isSend: head.type == "send")
        }
        switch FrameCoding.decodeClientFrame(text) {
        case .success(let frame): return .frame(frame)
        case .failure(let error): return .undecodable(error)
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
        logger.debug("connection closed", metadata: ["session": "\(id)"])
    }

    /// Runs the time-based checks now.
    func tick() {
        handle(.tick(now: clock.nowMillis()))
    }

    /// Tells every session the server is going away and closes them.
    func shutdown() {
        handle(.shutdown(now: clock.nowMillis()))
    }

    private func handle(_ event: HubEvent, relayStartedAt: ContinuousClock.Instant? = nil) {
        for (id, frames) in writes.drain() {
            _ = state.handle(.written(id, frames: frames))
        }
        let actions = state.handle(event)
        for action in actions {
            perform(action, relayStartedAt: relayStartedAt)
        }
        metrics.update(
            sessions: state.sessionCount, usersOnline: state.onlineUserCount, held: state.heldCount,
            heldBytes: state.heldBytes, queuedFrames: state.queuedFrames, queuedBytes: state.queuedBytes)
    }

    private func perform(_ action: HubAction, relayStartedAt: ContinuousClock.Instant?) {
        switch action {
        case .send(let id, let frame):
            guard let outbox = outboxes[id] else { return }
            var startedAt: ContinuousClock.Instant?
            observe(frame, session: id)
            if case .message(let message) = frame, message.held != true {
                startedAt = relayStartedAt
                metrics.messageRelayed()
            }
            outbox.continuation.yield(.text(FrameCoding.encode(frame), relayStartedAt: startedAt))
        case .close(let id, let code, let reason):
            metrics.closed(reason)
            logger.info(
                "closing session", metadata: ["session": "\(id)", "reason": "\(reason.rawValue)", "code": "\(code)"])
            guard let outbox = outboxes[id] else { return }
            if reason == .slowConsumer {
                // Its writer is stuck behind the backlog: end the connection instead of queueing a close.
                logger.warning("slow consumer closed", metadata: ["session": "\(id)"])
                outbox.abort()
            } else {
                outbox.continuation.yield(.close(code: code, reason: reason))
                // A client that does not read would keep its socket forever with the close queued behind what
                // it does not read: after a grace period the connection is ended anyway (a no-op if it is gone).
                let abort = outbox.abort
                Task {
                    try? await Task.sleep(for: SignalHub.closeGrace)
                    abort()
                }
            }
        case .verifyToken(let id, let requestId, let token, let purpose):
            let authority = authority
            Task {
                let result = await authority.checkLoginToken(token)
                self.tokenChecked(id, requestId: requestId, purpose: purpose, result: result)
            }
        }
    }

    private func tokenChecked(_ id: SessionID, requestId: Int?, purpose: TokenPurpose, result: TokenCheck) {
        handle(.tokenChecked(id, requestId: requestId, purpose: purpose, result: result, now: clock.nowMillis()))
    }

    private func observe(_ frame: ServerFrame, session id: SessionID) {
        switch frame {
        case .answer(let answer):
            metrics.answer(answer)
            if answer.result == .failed {
                logger.notice(
                    "send failed",
                    metadata: [
                        "session": "\(id)", "user": "\(state.userId(of: id) ?? "-")",
                        "reason": "\(answer.reason?.rawValue ?? "-")",
                    ])
            }
        case .error(let error):
            metrics.error(error.code)
            logger.notice(
                "frame refused",
                metadata: [
                    "session": "\(id)", "user": "\(state.userId(of: id) ?? "-")", "code": "\(error.code.rawValue)",
                    "detail": "\(error.message)",
                ])
        case .welcome(let welcome):
            logger.info("logged in", metadata: ["session": "\(id)", "user": "\(welcome.userId)"])
        case .renewed(let renewed):
            logger.info(
                "token renewed",
                metadata: [
                    "session": "\(id)", "user": "\(state.userId(of: id) ?? "-")", "expiresAt": "\(renewed.expiresAt)",
                ])
        default:
            break
        }
    }
}
