import CallAPI
import CallAPISignalProtocol
import Logging
import NIOCore

/// The client's shell: runs ``ConnectionMachine`` and performs its actions (sockets, completions, listeners).
/// Confined to one event loop, its socket's (``LoopCommands``).
final class ClientCore: ClientSocketDelegate {
    private let loop: any EventLoop
    private var machine: ConnectionMachine
    private let urls: [String]
    private let logger: Logger
    private let now: @Sendable () -> Int64
    private let jitter: @Sendable () -> Double
    private let tickInterval: Int64
    private var sockets: [Int: ClientSocket] = [:]
    private var nextTicket = 1
    private var sendCompletions: [Int: SendCompletion] = [:]
    private var renewCompletions: [Int: @Sendable (Result<Int64, SignalClientError>) -> Void] = [:]
    private var presenceCompletions: [Int: @Sendable (Result<[String], SignalClientError>) -> Void] = [:]
    private var callsCompletions: [Int: @Sendable (Result<ServerFrame.CallsPage, SignalClientError>) -> Void] = [:]
    private var reportCompletions: [Int: @Sendable (SignalClientError?) -> Void] = [:]
    private var deviceCompletions: [Int: @Sendable (Result<[PushDeviceSummary], SignalClientError>) -> Void] = [:]
    private var invitationWaiters: [Int: InvitationWaiter] = [:]
    private var matchCompletions: [Int: @Sendable (Result<[String], SignalClientError>) -> Void] = [:]
    /// This session's invitations.
    private var invitationBook = InvitationBook()
    private var invitationObservers: [Int: AsyncStream<InvitationEvent>.Continuation] = [:]
    private var loginWaiters: [CheckedContinuation<Void, any Error>] = []
    /// CallAPI's listener, and what arrives before it is added (an app logs in, then initializes CallAPI; and
    /// `addListener` reaches this loop as a task, which NIO may run after a read that was already waiting).
    private let messageListeners = SignalMessageListeners()
    private var connectionListeners: [WeakConnectionListener] = []
    private var stateObservers: [Int: AsyncStream<SignalConnectionState>.Continuation] = [:]
    private var eventObservers: [Int: AsyncStream<SignalClientEvent>.Continuation] = [:]
    private var nextObserver = 1
    /// The one wake-up armed for the machine's next deadline, and when it fires (the machine's milliseconds).
    private var wakeUp: (at: Int64, task: Scheduled<Void>)?
    /// When the machine was last ticked.
    private var lastTick: Int64 = 0
    private var lastState: SignalConnectionState = .idle
    /// The certificates a `wss://` server must lead to (nil: the system's roots).
    private let trustedCertificatesPEM: String?
    /// The machine's action buffer, emptied and kept for the next event unless one event made it large.
    private var spareActions: [ConnectionAction]?
    private static let keptActions = 16

    init(
        configuration: SignalClientConfiguration, loop: any EventLoop, logger: Logger,
        now: @escaping @Sendable () -> Int64, jitter: @escaping @Sendable () -> Double
    ) {
        self.loop = loop
        machine = ConnectionMachine(
            settings: .init(
                pingIntervalMillis: configuration.pingIntervalMillis,
                livenessTimeoutMillis: configuration.livenessTimeoutMillis,
                backoffBaseMillis: configuration.backoffBaseMillis, backoffMaxMillis: configuration.backoffMaxMillis,
                connectTimeoutMillis: configuration.connectTimeoutMillis,
                sendQueueLimit: configuration.sendQueueLimit,
                sendQueueTimeoutMillis: configuration.sendQueueTimeoutMillis,
                requestTimeoutMillis: configuration.requestTimeoutMillis, servers: configuration.urls.count,
                deviceId: configuration.deviceId))
        urls = configuration.urls
        trustedCertificatesPEM = configuration.trustedCertificatesPEM
        self.logger = logger
        self.now = now
        self.jitter = jitter
        tickInterval = configuration.tickIntervalMillis
    }

    var state: SignalConnectionState { lastState }
    var clockOffset: ClockOffset? { machine.clock.estimate }
    var userId: String? { machine.userId }

    // MARK: - Commands

    func login(token: String, waiter: CheckedContinuation<Void, any Error>?) {
        if let waiter {
            if case .connected = machine.phase {
                waiter.resume()
            } else {
                loginWaiters.append(waiter)
            }
        }
        handle(.login(token: token))
    }

    func loginTimedOut() {
        guard !loginWaiters.isEmpty, !lastState.isConnected else { return }
        handle(.logout)
        failLoginWaiters(.stopped(.loginTimedOut))
    }

    func logout() {
        handle(.logout)
    }

    func renew(token: String, completion: @escaping @Sendable (Result<Int64, SignalClientError>) -> Void) {
        let ticket = takeTicket()
        renewCompletions[ticket] = completion
        handle(.renew(ticket: ticket, token: token))
    }

    func send(
        to userId: String, body: String, ttl: Int, push: PushMark? = nil, copy: Bool = false,
        completion: SendCompletion
    ) {
        let ticket = takeTicket()
        sendCompletions[ticket] = completion
        handle(.send(ticket: ticket, to: userId, body: body, ttl: ttl, push: push, copy: copy))
    }

    func devices(
        _ request: DeviceRequest,
        completion: @escaping @Sendable (Result<[PushDeviceSummary], SignalClientError>) -> Void
    ) {
        let ticket = takeTicket()
        deviceCompletions[ticket] = completion
        handle(.devices(ticket: ticket, request))
    }

    func presence(subscribe: Bool, completion: @escaping @Sendable (Result<[String], SignalClientError>) -> Void) {
        let ticket = takeTicket()
        presenceCompletions[ticket] = completion
        handle(.presence(ticket: ticket, subscribe: subscribe))
    }

    func calls(
        _ request: ClientFrame.CallsRequest,
        completion: @escaping @Sendable (Result<ServerFrame.CallsPage, SignalClientError>) -> Void
    ) {
        let ticket = takeTicket()
        callsCompletions[ticket] = completion
        handle(.calls(ticket: ticket, request))
    }

    func report(_ report: CallReport, completion: @escaping @Sendable (SignalClientError?) -> Void) {
        let ticket = takeTicket()
        reportCompletions[ticket] = completion
        handle(.report(ticket: ticket, report))
    }

    /// Who waits for an invitation method's answer, and what it gets.
    enum InvitationWaiter {
        /// `sendInvitation`: the new invitation (the server does not echo its content).
        case sent(
            content: String, channelId: String, @Sendable (Result<LocalInvitation, InvitationApiCallError>) -> Void)
        /// `cancelInvitation`.
        case local(@Sendable (Result<LocalInvitation, InvitationApiCallError>) -> Void)
        /// `acceptInvitation`, `refuseInvitation`.
        case remote(@Sendable (Result<RemoteInvitation, InvitationApiCallError>) -> Void)

        func fail(_ error: InvitationApiCallError) {
            switch self {
            case .sent(_, _, let done), .local(let done): done(.failure(error))
            case .remote(let done): done(.failure(error))
            }
        }
    }

    func invitation(_ request: InvitationRequest, waiter: InvitationWaiter) {
        let ticket = takeTicket()
        invitationWaiters[ticket] = waiter
        handle(.invitation(ticket: ticket, request))
    }

    func match(_ request: MatchRequest, completion: @escaping @Sendable (Result<[String], SignalClientError>) -> Void) {
        let ticket = takeTicket()
        matchCompletions[ticket] = completion
        handle(.match(ticket: ticket, request))
    }

    func observeInvitations(_ continuation: AsyncStream<InvitationEvent>.Continuation) {
        let key = nextObserver
        nextObserver += 1
        invitationObservers[key] = continuation
        continuation.onTermination = onLoop { $0.removeInvitationObserver(key) }
    }

    private func removeInvitationObserver(_ key: Int) { invitationObservers[key] = nil }

    func addListener(_ listener: any ISignalClientListener) {
        messageListeners.add(listener)
    }

    func removeListener(_ listener: any ISignalClientListener) {
        messageListeners.remove(listener)
    }

    func addConnectionListener(_ listener: any SignalConnectionListener) {
        connectionListeners.removeAll { $0.value == nil || $0.value === listener }
        connectionListeners.append(WeakConnectionListener(value: listener))
    }

    func removeConnectionListener(_ listener: any SignalConnectionListener) {
        connectionListeners.removeAll { $0.value == nil || $0.value === listener }
    }

    func observeStates(_ continuation: AsyncStream<SignalConnectionState>.Continuation) {
        let key = nextObserver
        nextObserver += 1
        stateObservers[key] = continuation
        continuation.yield(lastState)
        continuation.onTermination = onLoop { $0.removeStateObserver(key) }
    }

    func observeEvents(_ continuation: AsyncStream<SignalClientEvent>.Continuation) {
        let key = nextObserver
        nextObserver += 1
        eventObservers[key] = continuation
        continuation.onTermination = onLoop { $0.removeEventObserver(key) }
    }

    private func removeStateObserver(_ key: Int) { stateObservers[key] = nil }
    private func removeEventObserver(_ key: Int) { eventObservers[key] = nil }

    /// Ends everything (the client is going away).
    func shutdown() {
        handle(.logout)
        wakeUp?.task.cancel()
        wakeUp = nil
        for continuation in stateObservers.values { continuation.finish() }
        for continuation in eventObservers.values { continuation.finish() }
        for continuation in invitationObservers.values { continuation.finish() }
        stateObservers = [:]
        eventObservers = [:]
        invitationObservers = [:]
    }

    // MARK: - Socket events

    func socketOpened(_ socket: Int) {
        handle(.socketOpened(socket: socket))
    }

    func received(utf8 text: UnsafeBufferPointer<UInt8>, socket: Int) {
        switch FrameCoding.decodeServerFrame(utf8: text) {
        case .success(let frame):
            handle(.frame(socket: socket, frame))
        case .failure(let error):
            logger.warning("unreadable frame from the server", metadata: ["error": "\(error)"])
        }
    }

    func socketClosed(_ socket: Int, cause: String) {
        sockets[socket] = nil
        handle(.socketClosed(socket: socket, cause: cause, jitter: jitter()))
    }

    private func tick() {
        wakeUp = nil
        lastTick = now()
        handle(.tick(jitter: jitter()))
    }

    /// Arms the wake-up for the machine's next deadline, unless one is armed for that time or earlier: a deadline
    /// that moved later (a frame arrived, pushing the liveness check back) is met by the earlier wake-up, which
    /// finds nothing to do and arms the next. Never sooner than `tickInterval` after the last tick, so a busy
    /// connection is not re-armed per frame.
    private func armWakeUp() {
        guard let due = Self.nextDeadline(of: &machine) else {
            wakeUp?.task.cancel()
            wakeUp = nil
            return
        }
        let at = max(due, lastTick + tickInterval)
        if let wakeUp, wakeUp.at <= at { return }
        wakeUp?.task.cancel()
        let core = NIOLoopBound(WeakCore(value: self), eventLoop: loop)
        let task = loop.scheduleTask(in: .milliseconds(max(0, at - now()))) { () -> Void in core.value.value?.tick() }
        wakeUp = (at, task)
    }

    /// The machine's next deadline, read in place: read through the property, the whole machine was copied and
    /// released around the query (callgrind: ~1,100 instructions per relayed message at a bench client).
    private static func nextDeadline(of machine: inout ConnectionMachine) -> Int64? { machine.nextDeadline }

    /// A closure that may be called from anywhere and runs `body` on this core's loop, if the core still exists.
    private func onLoop<Argument>(_ body: @escaping (ClientCore) -> Void) -> @Sendable (Argument) -> Void {
        let core = NIOLoopBound(WeakCore(value: self), eventLoop: loop)
        let body = NIOLoopBound(body, eventLoop: loop)
        let loop = loop
        return { _ in
            loop.execute {
                if let value = core.value.value { body.value(value) }
            }
        }
    }

    // MARK: - Actions

    private func takeTicket() -> Int {
        defer { nextTicket += 1 }
        return nextTicket
    }

    private func handle(_ event: ConnectionEvent) {
        // Into the kept buffer, taken out while the actions run: an action's work can handle another event.
        var actions = spareActions.take() ?? []
        machine.handle(event, now: now(), into: &actions)
        // Moved out in order, not copied by a `for` loop (as the server's hub performs its actions).
        actions.withUnsafeMutableBufferPointer { $0.reverse() }
        while let action = actions.popLast() { perform(action) }
        if actions.capacity <= Self.keptActions { spareActions = consume actions }
        armWakeUp()
    }

    private func perform(_ action: consuming ConnectionAction) {
        switch consume action {
        case .openSocket(let id, let server):
            sockets[id] = ClientSocket(
                id: id, url: urls[server], trustedCertificatesPEM: trustedCertificatesPEM, loop: loop, delegate: self,
                logger: logger)
        case .closeSocket(let id):
            sockets.removeValue(forKey: id)?.close()
        case .write(let id, let frame):
            sockets[id]?.write(frame)
        case .completeSend(let ticket, let result):
            sendCompletions.removeValue(forKey: ticket)?.complete(result)
        case .completeRenew(let ticket, let result):
            renewCompletions.removeValue(forKey: ticket)?(result)
        case .completePresence(let ticket, let result):
            presenceCompletions.removeValue(forKey: ticket)?(result)
        case .completeCalls(let ticket, let result):
            callsCompletions.removeValue(forKey: ticket)?(result)
        case .completeReport(let ticket, let error):
            reportCompletions.removeValue(forKey: ticket)?(error)
        case .state(let state):
            changeState(to: state)
        case .deliver(let message):
            messageListeners.deliver(
                message.body, from: SignalSender(userId: message.from, receivedAtMillis: message.sentAt))
            emit(.message(from: message.from, body: message.body, sentAt: message.sentAt))
        case .presenceChanged(let change):
            emit(.presenceChanged(userId: change.userId, online: change.online))
        case .tokenWillExpire(let expiresAt):
            logger.notice("token expires soon", metadata: ["expiresAt": "\(expiresAt)"])
            for listener in connectionListeners {
                listener.value?.onTokenPrivilegeWillExpire(expiresAtMillis: expiresAt)
            }
            emit(.tokenWillExpire(expiresAtMillis: expiresAt))
        case .heldResult(let result):
            emit(.heldResult(messageId: result.messageId, to: result.to, delivered: result.result == .delivered))
        case .completeDevices(let ticket, let result):
            deviceCompletions.removeValue(forKey: ticket)?(result)
        case .callWithdrawn(let tombstone):
            logger.info(
                "pushed call withdrawn",
                metadata: ["call": "\(tombstone.callId)", "reason": "\(tombstone.reason.rawValue)"])
            emit(.callWithdrawn(callId: tombstone.callId, reason: tombstone.reason))
        case .completeInvitation(let ticket, let result):
            guard let waiter = invitationWaiters.removeValue(forKey: ticket) else { return }
            switch result {
            case .success(let update): complete(waiter, with: update)
            case .failure(let error): waiter.fail(InvitationApiCallError(error))
            }
        case .invitationUpdate(.local(let frame)):
            emit(invitationBook.apply(frame).1)
        case .invitationUpdate(.remote(let frame)):
            emit(invitationBook.apply(frame).1)
        case .completeMatch(let ticket, let result):
            matchCompletions.removeValue(forKey: ticket)?(result)
        case .callPlaced(let order):
            logger.info(
                "the server asks for a call", metadata: ["call": "\(order.callId)", "callee": "\(order.callee)"])
            emit(.callPlaced(ServerPlacedCall(order)))
        case .matched(let match):
            logger.info("matched", metadata: ["match": "\(match.matchId)", "peer": "\(match.peer)"])
            emit(.matched(MatchFound(match)))
        }
    }

    /// Applies the server's answer to an invitation method, then hands the waiter the invitation.
    private func complete(_ waiter: InvitationWaiter, with update: InvitationUpdate) {
        let gone = InvitationApiCallError.alreadyEnd("this session no longer has the invitation")
        switch (waiter, update) {
        case (.sent(let content, let channelId, let done), .local(let frame)):
            let (invitation, events) = invitationBook.sent(frame, content: content, channelId: channelId)
            emit(events)
            done(.success(invitation))
        case (.local(let done), .local(let frame)):
            let (invitation, events) = invitationBook.apply(frame)
            emit(events)
            done(invitation.map { .success($0) } ?? .failure(gone))
        case (.remote(let done), .remote(let frame)):
            let (invitation, events) = invitationBook.apply(frame)
            emit(events)
            done(invitation.map { .success($0) } ?? .failure(gone))
        case (_, .local(let frame)):
            emit(invitationBook.apply(frame).1)
            waiter.fail(.signaling(.refused(.invalidFrame, "the server answered with a local_invitation")))
        case (_, .remote(let frame)):
            emit(invitationBook.apply(frame).1)
            waiter.fail(.signaling(.refused(.invalidFrame, "the server answered with a remote_invitation")))
        }
    }

    private func emit(_ events: [InvitationEvent]) {
        for event in events {
            for continuation in invitationObservers.values { continuation.yield(event) }
        }
    }

    private func changeState(to state: SignalConnectionState) {
        let previous = lastState
        lastState = state
        logger.info("signaling \(state)")
        for continuation in stateObservers.values { continuation.yield(state) }
        connectionListeners.removeAll { $0.value == nil }
        if case .connected = state {
            let waiters = loginWaiters
            loginWaiters = []
            for waiter in waiters { waiter.resume() }
            for listener in connectionListeners { listener.value?.onConnected() }
        } else if previous.isConnected {
            for listener in connectionListeners { listener.value?.onDisconnected(reason: state.description) }
            // The session is gone, and its invitations with it.
            emit(invitationBook.connectionLost())
        }
        switch state {
        case .stopped(let reason):
            failLoginWaiters(.stopped(reason))
        default:
            break
        }
    }

    private func failLoginWaiters(_ error: SignalClientError) {
        let waiters = loginWaiters
        loginWaiters = []
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    private func emit(_ event: SignalClientEvent) {
        for continuation in eventObservers.values { continuation.yield(event) }
    }
}

private struct WeakCore {
    weak var value: ClientCore?
}

private struct WeakConnectionListener {
    weak var value: (any SignalConnectionListener)?
}
