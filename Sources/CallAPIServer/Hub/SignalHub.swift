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
    /// The call ledger, fed every `send` the hub handles and every session that closes.
    private let ledger: CallLedger?
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

    /// Performs the state's push actions (nil: pushes are dropped, registrations are not saved).
    private let push: PushService?

    init(
        limits: HubLimits, authority: TokenAuthority, clock: any SignalServerClock, metrics: ServerMetrics,
        logger: Logger, pushPolicy: PushPolicy = PushPolicy(), devices: DeviceRegistry = DeviceRegistry(),
        push: PushService? = nil, ledger: CallLedger? = nil
    ) {
        state = HubState(
            limits: limits, pushPolicy: pushPolicy, devices: devices, reportsRelays: ledger != nil)
        self.push = push
        self.ledger = ledger
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
        let now = clock.nowMillis()
        handle(.disconnected(id, now: now))
        ledger?.handle(.sessionClosed(id), now: now)
        outboxes.removeValue(forKey: id)?.continuation.finish()
        logger.debug("connection closed", metadata: ["session": "\(id)"])
    }

    /// Runs the time-based checks now.
    func tick() {
        let now = clock.nowMillis()
        handle(.tick(now: now))
        ledger?.handle(.tick, now: now)
    }

    /// Applies a push event (a provider's rejection, the operator's removal of a device).
    func handlePush(_ event: HubEvent) {
        handle(event)
    }

    /// The push device registry now.
    var devices: DeviceRegistry { state.devices }

    /// Removes `userId`'s device `deviceId` (the operator's request); returns whether it was there.
    func removeDevice(_ deviceId: String, of userId: String) -> Bool {
        let existed = state.devices.devices(of: userId).contains { $0.device.deviceId == deviceId }
        handle(.removeDevice(userId: userId, deviceId: deviceId, now: clock.nowMillis()))
        return existed
    }

    /// Tells every session the server is going away and closes them.
    func shutdown() {
        handle(.shutdown(now: clock.nowMillis()))
    }

    private func handle(_ event: HubEvent, relayStartedAt: ContinuousClock.Instant? = nil) {
        for (id, frames) in writes.drain() {
            _ = state.handle(.written(id, frames: frames))
        }
        let actions = state.handle(answeredBusy(event) ?? event)
        for action in actions {
            perform(action, relayStartedAt: relayStartedAt)
        }
        metrics.update(
            sessions: state.sessionCount, usersOnline: state.onlineUserCount, held: state.heldCount,
            heldBytes: state.heldBytes, queuedFrames: state.queuedFrames, queuedBytes: state.queuedBytes)
    }

    /// The ledger's busy answer in place of relaying a call to a user who is in another call (when it answers busy).
    private func answeredBusy(_ event: HubEvent) -> HubEvent? {
        guard let ledger, case .frame(let id, .send(let send), let now) = event, let user = state.userId(of: id),
            let body = ledger.busyAnswer(to: RelayedSendRequest(from: user, to: send.to, body: send.body), now: now)
        else { return nil }
        return .answeredOnBehalf(id, send, body: body, now: now)
    }

    private func perform(_ action: HubAction, relayStartedAt: ContinuousClock.Instant?) {
        switch action {
        case .relayed(let send):
            ledger?.handle(.relayed(send), now: clock.nowMillis())
        case .queryCalls(let id, let userId, let request):
            guard let ledger else { return }
            Task {
                let frame = await ledger.answer(request, userId: userId)
                self.ledgerAnswered(id, frame)
            }
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
        case .push(let pushAction):
            push?.perform(pushAction)
        case .verifyToken(let id, let requestId, let token, let purpose):
            let authority = authority
            Task {
                let result = await authority.checkLoginToken(token)
                self.tokenChecked(id, requestId: requestId, purpose: purpose, result: result)
            }
        }
    }

    private func ledgerAnswered(_ id: SessionID, _ frame: ServerFrame) {
        handle(.ledgerAnswered(id, frame))
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
