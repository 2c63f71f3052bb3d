import CallAPIServerCore
import CallAPISignalProtocol
import Logging
import NIOConcurrencyHelpers
import NIOCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The hub's shell: runs ``HubState`` and performs its actions (writes, closes, token checks, metrics, logs).
///
/// It runs on the event loop of the connection whose frame arrived, under a lock: the state stays one pure value,
/// and what it sends is queued straight on the receivers' ``WebSocketConnection``s, which their own loops write
/// once per tick. Only what awaits leaves the loop, after the lock is released: token checks (the authority is an
/// actor) and call-history queries (the ledger's store). The ledger's bookkeeping and the push queue are
/// synchronous and run under the lock, in the order the state decided.
final class SignalHub: SessionEndpoint {
    /// The state and the open connections, guarded together: a send is queued in the order the state decided it.
    private struct Core {
        var state: HubState
        var connections = ConnectionRegistry()
        /// The memory each event's actions are collected in (emptied after each event).
        var actions: [HubAction] = []
    }

    /// An action list that grew beyond this many is let go too.
    private static let keptActions = 64

    private let core: NIOLockedValueBox<Core>
    private let authority: TokenAuthority
    private let clock: any SignalServerClock
    private let metrics: ServerMetrics
    private let logger: Logger
    /// The call ledger, fed every `send` the hub handles and every session that closes.
    private let ledger: CallLedger?
    /// Frames the connections wrote, fed to the state before each event.
    let writes = WriteTally()
    let limits: HubLimits
    let maxMessageBytes: Int

    /// How long a closed session may take to write what is queued and the close frame.
    static let closeGrace: TimeAmount = .seconds(5)

    /// Performs the state's push actions (nil: pushes are dropped, registrations are not saved).
    private let push: PushService?

    init(
        limits: HubLimits, authority: TokenAuthority, clock: any SignalServerClock, metrics: ServerMetrics,
        logger: Logger, pushPolicy: PushPolicy = PushPolicy(), devices: DeviceRegistry = DeviceRegistry(),
        push: PushService? = nil, ledger: CallLedger? = nil
    ) {
        core = NIOLockedValueBox(
            Core(
                state: HubState(
                    limits: limits, pushPolicy: pushPolicy, devices: devices, reportsRelays: ledger != nil,
                    // Random per run, so that the ids of matched calls never repeat an earlier run's in the ledger.
                    matchIdPrefix: String(UInt64.random(in: 1 ... .max), radix: 36))))
        self.limits = limits
        maxMessageBytes = Self.hardLimit(for: limits)
        self.push = push
        self.ledger = ledger
        self.authority = authority
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    /// Messages larger than this close the socket (1009) instead of getting a `too_large` answer.
    static func hardLimit(for limits: HubLimits) -> Int { max(limits.maxFrameBytes * 4, 1 << 20) }

    var onlineUsers: [String] { core.withLockedValue { $0.state.onlineUsers } }
    var matchWaitingCount: Int { core.withLockedValue { $0.state.matchWaitingCount } }
    var sessionCount: Int { core.withLockedValue { $0.state.sessionCount } }
    /// When each connection open now closes. A closed session leaves the state at once, but its connection stays
    /// open until it has written the close and the client has gone; shutdown drains these.
    var connectionCloses: [EventLoopFuture<Void>] { core.withLockedValue { $0.connections.closes } }

    func open(channel: any Channel, flusher: LoopFlusher) -> WebSocketConnection {
        let now = clock.nowMillis()
        var opened: WebSocketConnection?
        handle(now: now) { core in
            let connection = core.connections.open(
                channel: channel, flusher: flusher, tally: writes, metrics: metrics)
            opened = connection
            logger.debug("connection opened", metadata: ["session": "\(connection.id)"])
            return .connected(connection.id)
        }
        // Set by the closure above, which always runs.
        return opened!
    }

    func received(utf8 text: UnsafeBufferPointer<UInt8>, on id: SessionID, at instant: NIODeadline) -> Bool {
        // Parsed before taking the lock, so that connections on other loops parse at the same time.
        received(Self.decode(utf8: text, maxFrameBytes: limits.maxFrameBytes), on: id, at: instant)
    }

    /// A text message arrived on `id`, decoded as ``decode(utf8:maxFrameBytes:)`` does. Returns whether the session is
    /// still open: once the hub has closed it, its connection reads no further.
    @discardableResult
    func received(_ message: consuming DecodedMessage, on id: SessionID, at instant: NIODeadline) -> Bool {
        let now = clock.nowMillis()
        // Moved, not copied, from the message into the event and from the event into the state: the frame holds
        // the relayed body (callgrind: the copies and their releases were ~1,000 instructions per relayed message).
        var event: HubEvent? =
            switch consume message {
            case .oversized(let bytes, let requestId, let isSend):
                .oversized(id, bytes: bytes, requestId: requestId, isSend: isSend)
            case .frame(let frame): .frame(id, frame)
            case .undecodable(let error): .undecodable(id, error)
            }
        return handle(
            now: now, relayStartedAt: instant,
            { _ in
                guard let event = event.take() else { preconditionFailure("an event is handled once") }
                return event
            }, answer: { $0.state.sessions.index(forKey: id) != nil })
    }

    /// A received text, read and checked against the frame limit.
    enum DecodedMessage: Sendable {
        case frame(ClientFrame)
        case undecodable(FrameDecodingError)
        case oversized(bytes: Int, requestId: Int?, isSend: Bool)
    }

    /// Reads a text message's bytes (valid UTF-8) as a client frame, checking the size limit.
    static func decode(utf8 text: UnsafeBufferPointer<UInt8>, maxFrameBytes: Int) -> DecodedMessage {
        // Size before parse: an oversized frame is refused from a look at its first bytes, never parsed.
        if text.count > maxFrameBytes {
            let head = FrameHeadPeek(utf8: text)
            return .oversized(
                bytes: text.count, requestId: head.requestId, isSend: head.type == ClientFrame.Kind.send.rawValue)
        }
        switch FrameCoding.decodeClientFrame(utf8: text) {
        case .success(let frame): return .frame(frame)
        case .failure(let error): return .undecodable(error)
        }
    }

    func receivedBinary(on id: SessionID) {
        handle(.binary(id), now: clock.nowMillis())
    }

    func closed(_ id: SessionID) {
        let now = clock.nowMillis()
        handle(
            now: now,
            { core in
                core.connections.remove(id)
                return .disconnected(id)
            },
            // Under the same lock, so the ledger learns of the close in the order the hub saw it.
            then: { _ in ledger?.handle(.sessionClosed(id), now: now) })
        logger.debug("connection closed", metadata: ["session": "\(id)"])
    }

    /// Runs the time-based checks now.
    func tick() {
        let now = clock.nowMillis()
        handle(now: now, { _ in .tick }, then: { _ in ledger?.handle(.tick, now: now) })
    }

    /// Applies a push event (a provider's rejection, the operator's removal of a device).
    func handlePush(_ event: HubEvent) {
        handle(event, now: clock.nowMillis())
    }

    /// The push device registry now.
    var devices: DeviceRegistry { core.withLockedValue { $0.state.devices } }

    /// Removes `userId`'s device `deviceId` (the operator's request); returns whether it was there.
    func removeDevice(_ deviceId: String, of userId: String) -> Bool {
        let now = clock.nowMillis()
        var existed = false
        handle(now: now) { core in
            existed = core.state.devices.devices(of: userId).contains { $0.device.deviceId == deviceId }
            return .removeDevice(userId: userId, deviceId: deviceId)
        }
        return existed
    }

    /// Asks `order.caller`'s newest session to place a call to `order.callee` with a new call id (docs/match.md);
    /// returns the call id, or why the call cannot be placed now.
    func placeCall(_ order: PlaceCallOrder) -> Result<String, PlaceCallRefusal> {
        for user in [order.caller, order.callee] {
            if let callId = ledger?.busyCall(of: user) { return .failure(.busy(user: user, callId: callId)) }
        }
        let now = clock.nowMillis()
        let callId = UUID().uuidString
        let refusal = handle(
            now: now, { _ in .placeCall(order, callId: callId) },
            answer: { core in
                core.state.awaitsPlacement(of: callId)
                    ? nil : core.state.placementProblem(order) ?? .offline(user: order.caller)
            })
        if let refusal { return .failure(refusal) }
        logger.info(
            "call placed by the server",
            metadata: ["callId": "\(callId)", "caller": "\(order.caller)", "callee": "\(order.callee)"])
        return .success(callId)
    }

    /// Ends every connection still open (shutdown, once the drain time is over).
    func abortRemaining() {
        for connection in core.withLockedValue({ Array($0.connections.connections.values) }) { connection.abort() }
    }

    /// Tells every session the server is going away and closes them.
    func shutdown() {
        handle(.shutdown, now: clock.nowMillis())
    }

    private func handle(_ event: HubEvent, now: Int64) {
        handle(now: now) { _ in event }
    }

    private func handle(now: Int64, _ prepare: (inout Core) -> HubEvent, then: (Core) -> Void = { _ in }) {
        handle(now: now, prepare, answer: then)
    }

    /// Under the lock: `prepare` registers what the event needs and names it, the state handles it at `now` (or the ledger's
    /// busy answer in its place), its actions are performed in order, and `answer` reads the outcome. Work that
    /// awaits (token checks, ledger queries) starts once the lock is released.
    private func handle<Answer>(
        now: Int64, relayStartedAt: NIODeadline? = nil, _ prepare: (inout Core) -> HubEvent,
        answer: (Core) -> Answer
    ) -> Answer {
        let (answer, awaited) = core.withLockedValue { core -> (Answer, [AwaitedWork]) in
            writes.drain { id, frames in _ = core.state.handle(.written(id, frames: frames), now: now) }
            let event = prepare(&core)
            var awaited: [AwaitedWork] = []
            var actions = core.actions
            core.actions = []
            // Not `answeredBusy(…) ?? event`: its autoclosure copied the event.
            if let busy = answeredBusy(event, state: core.state, now: now) {
                core.state.handle(busy, now: now, into: &actions)
            } else {
                core.state.handle(event, now: now, into: &actions)
            }
            // Moved out one by one, in order (reversed in place, then popped): a `for` loop copied each action and
            // released the copy and the original apart (callgrind: ~1,300 instructions per relayed message). Not a
            // helper taking a closure: through the closure's parameter each action was copied again.
            actions.withUnsafeMutableBufferPointer { $0.reverse() }
            while let action = actions.popLast() {
                if let work = perform(action, in: &core, relayStartedAt: relayStartedAt) { awaited.append(work) }
            }
            // Kept for the next event unless one event (a shutdown, a tick) made it large.
            if actions.capacity <= Self.keptActions { core.actions = actions }
            metrics.update(
                sessions: core.state.sessionCount, usersOnline: core.state.onlineUserCount,
                held: core.state.heldCount, heldBytes: core.state.heldBytes, queuedFrames: core.state.queuedFrames,
                queuedBytes: core.state.queuedBytes)
            return (answer(core), awaited)
        }
        for work in awaited { start(work) }
        return answer
    }

    /// The ledger's busy answer in place of relaying a call to a user who is in another call (when it answers busy).
    private func answeredBusy(_ event: HubEvent, state: HubState, now: Int64) -> HubEvent? {
        // The setting first: matching the event copies the send, and the sender's user is a table look-up.
        guard let ledger, ledger.answersBusy, case .frame(let id, .send(let send)) = event,
            let user = state.userId(of: id),
            let body = ledger.busyAnswer(
                to: RelayedSendRequest(from: user, to: send.to, body: send.relayBody), now: now)
        else { return nil }
        return .answeredOnBehalf(id, send, body: body)
    }

    /// An action's work that awaits, so must not run under the lock.
    private enum AwaitedWork {
        case tokenCheck(id: SessionID, requestId: Int?, token: String, purpose: TokenPurpose)
        case callsQuery(id: SessionID, userId: String, request: ClientFrame.CallsRequest, ledger: CallLedger)
    }

    private func perform(
        _ action: consuming HubAction, in core: inout Core, relayStartedAt: NIODeadline?
    ) -> AwaitedWork? {
        switch consume action {
        case .relayed(let send):
            ledger?.handle(.relayed(send), now: clock.nowMillis())
        case .queryCalls(let id, let userId, let request):
            guard let ledger else { return nil }
            return .callsQuery(id: id, userId: userId, request: request, ledger: ledger)
        case .send(let id, let frame):
            guard let connection = core.connections[id] else { return nil }
            var startedAt: NIODeadline?
            observe(frame, session: id, state: core.state)
            if case .message(let message) = frame, message.held != true {
                startedAt = relayStartedAt
                metrics.messageRelayed()
            }
            // The frames sent at high rates are written straight into the connection's buffer.
            if let bound = FrameCoding.lengthBound(frame) {
                connection.send(textAtMost: bound, relayStartedAt: startedAt) { FrameCoding.write(frame, into: $0) }
            } else {
                connection.send(utf8: FrameCoding.encodeUTF8(frame), relayStartedAt: startedAt)
            }
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
        case .push(let pushAction):
            // Returns at once (it queues, or saves the small device file): keeps the order the state decided.
            push?.perform(pushAction)
        case .verifyToken(let id, let requestId, let token, let purpose):
            return .tokenCheck(id: id, requestId: requestId, token: token, purpose: purpose)
        case .callNotPlaced(let call):
            logger.notice(
                "a server-placed call was not placed",
                metadata: ["callId": "\(call.callId)", "caller": "\(call.caller)", "reason": "\(call.reason)"])
            ledger?.handle(.notPlaced(call), now: clock.nowMillis())
        }
        return nil
    }

    private func start(_ work: AwaitedWork) {
        switch work {
        case .tokenCheck(let id, let requestId, let token, let purpose):
            let authority = authority
            Task {
                let result = await authority.checkLoginToken(token)
                handle(
                    .tokenChecked(id, requestId: requestId, purpose: purpose, result: result), now: clock.nowMillis())
            }
        case .callsQuery(let id, let userId, let request, let ledger):
            Task {
                let frame = await ledger.answer(request, userId: userId)
                handle(.ledgerAnswered(id, frame), now: clock.nowMillis())
            }
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
