import CallAPISignalProtocol
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The hub's shell: runs ``HubState`` and performs its actions (writes, closes, token checks, metrics, logs).
///
/// It runs on the event loop of the connection whose frame arrived, under a lock: the state stays one pure value,
/// and what it sends is queued straight on the receivers' ``WebSocketConnection``s, which their own loops write
/// once per tick. Only token checks leave the loop (the authority is an actor).
final class SignalHub: SessionEndpoint {
    /// The state and the open connections, guarded together: a send is queued in the order the state decided it.
    private struct Core {
        var state: HubState
        var connections = ConnectionRegistry()
    }

    private let core: NIOLockedValueBox<Core>
    private let authority: TokenAuthority
    private let clock: any SignalServerClock
    private let metrics: ServerMetrics
    private let logger: Logger
    /// Frames the connections wrote, fed to the state before each event.
    let writes = WriteTally()
    let limits: HubLimits
    let maxMessageBytes: Int

    /// How long a closed session may take to write what is queued and the close frame.
    static let closeGrace: TimeAmount = .seconds(5)

    init(
        limits: HubLimits, authority: TokenAuthority, clock: any SignalServerClock, metrics: ServerMetrics,
        logger: Logger
    ) {
        core = NIOLockedValueBox(Core(state: HubState(limits: limits)))
        self.limits = limits
        maxMessageBytes = Self.hardLimit(for: limits)
        self.authority = authority
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    /// Messages larger than this close the socket (1009) instead of getting a `too_large` answer.
    static func hardLimit(for limits: HubLimits) -> Int { max(limits.maxFrameBytes * 4, 1 << 20) }

    var onlineUsers: [String] { core.withLockedValue { $0.state.onlineUsers } }
    var sessionCount: Int { core.withLockedValue { $0.state.sessionCount } }
    /// Connections still open. A closed session leaves the state at once, but its connection stays open until it
    /// has written the close and the client has gone; shutdown drains these.
    var openConnectionCount: Int { core.withLockedValue { $0.connections.count } }

    func open(channel: any Channel, flusher: LoopFlusher) -> WebSocketConnection {
        let now = clock.nowMillis()
        var opened: WebSocketConnection?
        handle { core in
            let connection = core.connections.open(
                channel: channel, flusher: flusher, tally: writes, metrics: metrics)
            opened = connection
            logger.debug("connection opened", metadata: ["session": "\(connection.id)"])
            return .connected(connection.id, now: now)
        }
        // Set by the closure above, which always runs.
        return opened!
    }

    func received(text: String, on id: SessionID, at instant: ContinuousClock.Instant) -> Bool {
        // Parsed before taking the lock, so that connections on other loops parse at the same time.
        received(Self.decode(text, maxFrameBytes: limits.maxFrameBytes), on: id, at: instant)
    }

    /// A text message arrived on `id`, decoded as ``decode(_:maxFrameBytes:)`` does. Returns whether the session is
    /// still open: once the hub has closed it, its connection reads no further.
    @discardableResult
    func received(_ message: DecodedMessage, on id: SessionID, at instant: ContinuousClock.Instant) -> Bool {
        let now = clock.nowMillis()
        let event: HubEvent =
            switch message {
            case .oversized(let bytes, let requestId, let isSend):
                .oversized(id, bytes: bytes, requestId: requestId, isSend: isSend, now: now)
            case .frame(let frame): .frame(id, frame, now: now)
            case .undecodable(let error): .undecodable(id, error, now: now)
            }
        return handle(relayStartedAt: instant, { _ in event }, answer: { $0.state.sessions[id] != nil })
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

    func receivedBinary(on id: SessionID) {
        handle(.binary(id, now: clock.nowMillis()))
    }

    func closed(_ id: SessionID) {
        let now = clock.nowMillis()
        handle { core in
            core.connections.remove(id)
            return .disconnected(id, now: now)
        }
        logger.debug("connection closed", metadata: ["session": "\(id)"])
    }

    /// Runs the time-based checks now.
    func tick() {
        handle(.tick(now: clock.nowMillis()))
    }

    /// Ends every connection still open (shutdown, once the drain time is over).
    func abortRemaining() {
        for connection in core.withLockedValue({ Array($0.connections.connections.values) }) { connection.abort() }
    }

    /// Tells every session the server is going away and closes them.
    func shutdown() {
        handle(.shutdown(now: clock.nowMillis()))
    }

    private func handle(_ event: HubEvent) {
        handle { _ in event }
    }

    private func handle(_ prepare: (inout Core) -> HubEvent) {
        handle(prepare, answer: { _ in () })
    }

    /// Under the lock: `prepare` registers what the event needs and names it, the state handles it, its actions
    /// are performed in order, and `answer` reads the outcome. Token checks start once the lock is released.
    private func handle<Answer>(
        relayStartedAt: ContinuousClock.Instant? = nil, _ prepare: (inout Core) -> HubEvent,
        answer: (Core) -> Answer
    ) -> Answer {
        let (answer, checks) = core.withLockedValue { core -> (Answer, [TokenCheckRequest]) in
            for (id, frames) in writes.drain() {
                _ = core.state.handle(.written(id, frames: frames))
            }
            let event = prepare(&core)
            var checks: [TokenCheckRequest] = []
            for action in core.state.handle(event) {
                if let check = perform(action, in: core, relayStartedAt: relayStartedAt) { checks.append(check) }
            }
            metrics.update(
                sessions: core.state.sessionCount, usersOnline: core.state.onlineUserCount,
                held: core.state.heldCount, heldBytes: core.state.heldBytes, queuedFrames: core.state.queuedFrames,
                queuedBytes: core.state.queuedBytes)
            return (answer(core), checks)
        }
        for check in checks { start(check) }
        return answer
    }

    private struct TokenCheckRequest {
        var id: SessionID
        var requestId: Int?
        var token: String
        var purpose: TokenPurpose
    }

    private func perform(
        _ action: HubAction, in core: Core, relayStartedAt: ContinuousClock.Instant?
    ) -> TokenCheckRequest? {
        switch action {
        case .send(let id, let frame):
            guard let connection = core.connections[id] else { return nil }
            var startedAt: ContinuousClock.Instant?
            observe(frame, session: id, state: core.state)
            if case .message(let message) = frame, message.held != true {
                startedAt = relayStartedAt
                metrics.messageRelayed()
            }
            connection.send(text: FrameCoding.encode(frame), relayStartedAt: startedAt)
        case .close(let id, let code, let reason):
            metrics.closed(reason)
            logger.info(
                "closing session", metadata: ["session": "\(id)", "reason": "\(reason.rawValue)", "code": "\(code)"])
            guard let connection = core.connections[id] else { return nil }
            if reason == .slowConsumer {
                // Its socket is stuck behind the backlog: end the connection instead of queueing a close.
                logger.warning("slow consumer closed", metadata: ["session": "\(id)"])
                connection.abort()
            } else {
                connection.close(code: code, reason: reason.rawValue)
                // A client that does not read would keep its socket forever with the close queued behind what
                // it does not read: after a grace period the connection is ended anyway (a no-op if it is gone).
                let channel = connection.channel
                channel.eventLoop.scheduleTask(in: Self.closeGrace) { channel.close(promise: nil) }
            }
        case .verifyToken(let id, let requestId, let token, let purpose):
            return TokenCheckRequest(id: id, requestId: requestId, token: token, purpose: purpose)
        }
        return nil
    }

    private func start(_ check: TokenCheckRequest) {
        let authority = authority
        Task {
            let result = await authority.checkLoginToken(check.token)
            handle(
                .tokenChecked(
                    check.id, requestId: check.requestId, purpose: check.purpose, result: result,
                    now: clock.nowMillis()))
        }
    }

    private func observe(_ frame: ServerFrame, session id: SessionID, state: HubState) {
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
