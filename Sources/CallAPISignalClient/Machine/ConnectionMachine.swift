import CallAPISignalProtocol

/// What the client's connection logic is told; the time it happened is the `now` of
/// ``ConnectionMachine/handle(_:now:)``. `jitter` is in 0...1.
enum ConnectionEvent: Sendable, Equatable {
    case login(token: String)
    case logout
    case renew(ticket: Int, token: String)
    /// `copy`: ask the server to copy the message to this user's other sessions too.
    case send(ticket: Int, to: String, body: String, ttl: Int, push: PushMark? = nil, copy: Bool = false)
    /// `register_device`, `devices` or `remove_device`.
    case devices(ticket: Int, DeviceRequest)
    /// `users` (`subscribe: false`) or `subscribe` (`true`).
    case presence(ticket: Int, subscribe: Bool)
    /// A page of the user's calls from the server's call ledger.
    case calls(ticket: Int, ClientFrame.CallsRequest)
    /// Send a call report (docs/timeline.md).
    case report(ticket: Int, CallReport)
    /// An invitation method (docs/invitations.md).
    case invitation(ticket: Int, InvitationRequest)
    /// Enter or leave the match queue (docs/match.md).
    case match(ticket: Int, MatchRequest)
    case socketOpened(socket: Int)
    case socketClosed(socket: Int, cause: String, jitter: Double)
    case frame(socket: Int, ServerFrame)
    case tick(jitter: Double)
}

/// What the client's shell does.
enum ConnectionAction: Sendable, Equatable {
    /// Open socket `Int` to the configured server at index `server`.
    case openSocket(Int, server: Int)
    case closeSocket(Int)
    case write(Int, ClientFrame)
    case completeSend(ticket: Int, Result<SendOutcome, SignalClientError>)
    case completeRenew(ticket: Int, Result<Int64, SignalClientError>)
    case completePresence(ticket: Int, Result<[String], SignalClientError>)
    case completeCalls(ticket: Int, Result<ServerFrame.CallsPage, SignalClientError>)
    /// The report was kept (`nil`), or why not.
    case completeReport(ticket: Int, SignalClientError?)
    case state(SignalConnectionState)
    case deliver(ServerFrame.Message)
    case presenceChanged(ServerFrame.PresenceChanged)
    case tokenWillExpire(expiresAt: Int64)
    case heldResult(ServerFrame.HeldResult)
    case completeDevices(ticket: Int, Result<[PushDeviceSummary], SignalClientError>)
    case callWithdrawn(ServerFrame.CallWithdrawn)
    /// The server answered an invitation method.
    case completeInvitation(ticket: Int, Result<InvitationUpdate, SignalClientError>)
    /// The server told of an invitation, unasked.
    case invitationUpdate(InvitationUpdate)
    /// The server answered a match-queue method: the tags waiting with (empty: not waiting).
    case completeMatch(ticket: Int, Result<[String], SignalClientError>)
    /// The server asks this client to place a call.
    case callPlaced(ServerFrame.PlaceCall)
    /// The match queue paired this user.
    case matched(ServerFrame.Matched)
}

/// A request about the user's push devices.
enum DeviceRequest: Sendable, Equatable {
    case register(PushDevice)
    case list
    case remove(deviceId: String)
}

/// The client's connection logic as a pure state machine: login, reconnect with backoff and jitter, the queue
/// of sends waiting for a connection, answers matched to requests, liveness. No I/O, no clock.
///
/// Everything that belongs to one phase lives in that phase's case: the socket and attempt of a connection being
/// made, the requests written on a connection, the backoff between attempts, the login's token.
struct ConnectionMachine: Sendable {
    struct Settings: Sendable, Equatable {
        var pingIntervalMillis: Int64
        var livenessTimeoutMillis: Int64
        var backoffBaseMillis: Int64
        var backoffMaxMillis: Int64
        var connectTimeoutMillis: Int64
        var sendQueueLimit: Int
        var sendQueueTimeoutMillis: Int64
        var requestTimeoutMillis: Int64
        /// The servers configured (``SignalClientConfiguration/urls``), tried in turn when a connection is lost.
        var servers = 1
        /// The push device named at login (``SignalClientConfiguration/deviceId``).
        var deviceId: String? = nil
    }

    enum Phase: Sendable, Equatable {
        /// Never logged in.
        case idle
        /// A socket is being opened.
        case connecting(Attempt)
        /// The socket is open and the `login` frame written; waiting for `welcome`.
        case authenticating(Attempt)
        /// Logged in on a socket.
        case connected(Connection)
        /// Between attempts.
        case waiting(Backoff)
        /// Logged out, refused or expired: a new `login` starts again.
        case stopped(SignalStopReason)
    }

    /// What a login keeps from one connection to the next, until it stops.
    struct Login: Sendable, Equatable {
        /// The token the next `login` frame carries.
        var token: String
        /// Whether presence changes were asked for: subscribed again on every connection.
        var subscribed = false
        /// The token's expiry as the server last told it.
        var expiresAt: Int64?
    }

    /// An attempt to connect: its socket, and the sends waiting for it.
    struct Attempt: Sendable, Equatable {
        /// 0 for the first attempt after a login or a lost connection.
        var number: Int
        var socket: Int
        /// When this step (opening, then logging in) started: the connect timeout runs from here.
        var since: Int64
        var login: Login
        var queue: [Queued] = []
        /// Why the server said it closes the socket, if it did.
        var closingReason: SignalErrorCode?
    }

    /// A logged-in socket and the requests written on it.
    struct Connection: Sendable, Equatable {
        var socket: Int
        var login: Login
        var userId: String
        var sessionId: String
        var lastReceived: Int64
        var lastPing: Int64
        /// Pings written and not answered yet: when each left, by request id (for the clock offset).
        var pings: [Int: Int64] = [:]
        /// Requests written and not answered yet, by request id.
        var inFlight: [Int: InFlight] = [:]
        /// Why the server said it closes the socket, if it did.
        var closingReason: SignalErrorCode?
    }

    /// The wait before the next attempt, and why.
    struct Backoff: Sendable, Equatable {
        /// The number of the next attempt.
        var attempt: Int
        var until: Int64
        var delay: Int64
        var cause: String
        var login: Login
        var queue: [Queued] = []
    }

    /// A request written to the socket, waiting for its answer.
    enum Pending: Sendable, Equatable {
        case send(ticket: Int)
        case renew(ticket: Int)
        case presence(ticket: Int)
        case calls(ticket: Int)
        case report(ticket: Int)
        case devices(ticket: Int)
        case invitation(ticket: Int)
        case match(ticket: Int)
    }

    /// A written request and when it was written (for its timeout).
    struct InFlight: Sendable, Equatable {
        var pending: Pending
        var sentAt: Int64
    }

    /// A send waiting for a connection.
    struct Queued: Sendable, Equatable {
        var ticket: Int
        var to: String
        var body: String
        var ttl: Int
        var push: PushMark?
        var copy = false
        var queuedAt: Int64
    }

    let settings: Settings
    private(set) var phase: Phase = .idle
    /// Request ids and socket numbers are never reused, so a late answer or event cannot be taken for a new one's.
    private var nextRequestId = 1
    /// Pings are numbered apart from requests: only a `pong` answers one.
    private var nextPingId = 1
    /// The server's clock against the local one, from the login's and the pings' round trips.
    private(set) var clock = ClockOffsetEstimator()
    private var nextSocket = 1
    /// The server the next socket opens to: the same one while it serves, the next in the list once a connection to
    /// it was lost or could not be made (a node of a cluster killed: docs/scale-out.md).
    private(set) var server = 0
    private static let loginRequestId = 0

    init(settings: Settings) {
        self.settings = settings
    }

    /// The state to show for the current phase.
    var state: SignalConnectionState {
        switch phase {
        case .idle: .idle
        case .connecting(let attempt), .authenticating(let attempt): .connecting(attempt: attempt.number)
        case .connected(let connection): .connected(userId: connection.userId, sessionId: connection.sessionId)
        case .waiting(let backoff):
            .reconnecting(attempt: backoff.attempt, delayMillis: backoff.delay, cause: backoff.cause)
        case .stopped(let reason): .stopped(reason)
        }
    }

    /// The user of the current connection.
    var userId: String? {
        if case .connected(let connection) = phase { connection.userId } else { nil }
    }

    /// The current login, if there is one.
    var login: Login? {
        switch phase {
        case .connecting(let attempt), .authenticating(let attempt): attempt.login
        case .connected(let connection): connection.login
        case .waiting(let backoff): backoff.login
        case .idle, .stopped: nil
        }
    }

    private var currentSocket: Int? {
        switch phase {
        case .connecting(let attempt), .authenticating(let attempt): attempt.socket
        case .connected(let connection): connection.socket
        default: nil
        }
    }

    /// Why a request that needs the connection fails while it is not connected.
    private var notConnectedError: SignalClientError {
        switch phase {
        case .idle: .notLoggedIn
        case .stopped(let reason): .stopped(reason)
        default: .notConnected
        }
    }

    /// Applies `event`, which happened at `now` (ms since 1970), and returns what to do.
    mutating func handle(_ event: ConnectionEvent, now: Int64) -> [ConnectionAction] {
        var actions: [ConnectionAction] = []
        handle(event, now: now, into: &actions)
        return actions
    }

    /// Applies `event` as ``handle(_:now:)`` does, appending what to do to `actions`: the shell reuses one buffer
    /// across events (an array per event, and one per frame handled inside it, were three allocations per relayed
    /// message at a bench client; docs/benchmarks.md).
    mutating func handle(_ event: ConnectionEvent, now: Int64, into actions: inout [ConnectionAction]) {
        switch event {
        case .login(let token):
            switch phase {
            case .idle, .stopped:
                connect(attempt: 0, login: Login(token: token), queue: [], now: now, into: &actions)
            case .waiting(var backoff):
                backoff.login.token = token
                connect(attempt: 0, login: backoff.login, queue: backoff.queue, now: now, into: &actions)
            case .connecting, .authenticating, .connected:
                // Already connecting or connected: the new token is used from the next login on.
                changeLogin { $0.token = token }
            }
        case .logout:
            if let socket = currentSocket {
                if case .connected = phase { actions.append(.write(socket, .logout(.init()))) }
                actions.append(.closeSocket(socket))
            }
            stop(.loggedOut, into: &actions)
        case .renew(let ticket, let token):
            // Not connected, the token is kept for the next login.
            changeLogin { $0.token = token }
            guard case .connected = phase else {
                return actions.append(.completeRenew(ticket: ticket, .success(login?.expiresAt ?? 0)))
            }
            request(.renew(ticket: ticket), now: now, into: &actions) { .renew(.init(id: $0, token: token)) }
        case .send(let ticket, let to, let body, let ttl, let push, let copy):
            switch phase {
            case .connected:
                request(.send(ticket: ticket), now: now, into: &actions) {
                    .send(
                        .init(id: $0, to: to, body: body, ttl: ttl > 0 ? ttl : nil, push: push, copy: copy ? true : nil)
                    )
                }
            case .idle:
                actions.append(.completeSend(ticket: ticket, .failure(.notLoggedIn)))
            case .stopped(let reason):
                actions.append(.completeSend(ticket: ticket, .failure(.stopped(reason))))
            case .connecting, .authenticating, .waiting:
                let queued = Queued(ticket: ticket, to: to, body: body, ttl: ttl, push: push, copy: copy, queuedAt: now)
                if !enqueue(queued) {
                    actions.append(.completeSend(ticket: ticket, .failure(.queueFull(settings.sendQueueLimit))))
                }
            }
        case .devices(let ticket, let request):
            guard case .connected = phase else {
                return actions.append(.completeDevices(ticket: ticket, .failure(notConnectedError)))
            }
            self.request(.devices(ticket: ticket), now: now, into: &actions) { id in
                switch request {
                case .register(let device): .registerDevice(.init(id: id, device: device))
                case .list: .devices(.init(id: id))
                case .remove(let deviceId): .removeDevice(.init(id: id, deviceId: deviceId))
                }
            }
        case .presence(let ticket, let subscribe):
            if subscribe { changeLogin { $0.subscribed = true } }
            guard case .connected = phase else {
                return actions.append(.completePresence(ticket: ticket, .failure(notConnectedError)))
            }
            request(.presence(ticket: ticket), now: now, into: &actions) {
                subscribe ? .subscribe(.init(id: $0)) : .users(.init(id: $0))
            }
        case .calls(let ticket, let calls):
            guard case .connected = phase else {
                return actions.append(.completeCalls(ticket: ticket, .failure(notConnectedError)))
            }
            request(.calls(ticket: ticket), now: now, into: &actions) {
                var calls = calls
                calls.id = $0
                return .calls(calls)
            }
        case .report(let ticket, let report):
            guard case .connected = phase else {
                return actions.append(.completeReport(ticket: ticket, notConnectedError))
            }
            request(.report(ticket: ticket), now: now, into: &actions) {
                var report = report
                report.id = $0
                return .report(report)
            }
        case .invitation(let ticket, let invitation):
            guard case .connected = phase else {
                return actions.append(.completeInvitation(ticket: ticket, .failure(notConnectedError)))
            }
            request(.invitation(ticket: ticket), now: now, into: &actions) { id in
                switch invitation {
                case .send(let to, let content, let channelId):
                    .invite(
                        .init(
                            id: id, to: to, content: content.isEmpty ? nil : content,
                            channelId: channelId.isEmpty ? nil : channelId))
                case .cancel(let invitationId): .cancelInvitation(.init(id: id, invitationId: invitationId))
                case .accept(let invitationId, let response):
                    .acceptInvitation(.init(id: id, invitationId: invitationId, response: response))
                case .refuse(let invitationId, let response):
                    .refuseInvitation(.init(id: id, invitationId: invitationId, response: response))
                }
            }
        case .match(let ticket, let match):
            guard case .connected = phase else {
                return actions.append(.completeMatch(ticket: ticket, .failure(notConnectedError)))
            }
            request(.match(ticket: ticket), now: now, into: &actions) { id in
                switch match {
                case .enter(let tags): .matchEnter(.init(id: id, tags: tags))
                case .leave: .matchLeave(.init(id: id))
                }
            }
        case .socketOpened(let socket):
            guard case .connecting(var attempt) = phase, attempt.socket == socket else { return }
            attempt.since = now
            phase = .authenticating(attempt)
            actions.append(
                .write(
                    socket,
                    .login(.init(id: Self.loginRequestId, token: attempt.login.token, deviceId: settings.deviceId))))
        case .socketClosed(let socket, let cause, let jitter):
            guard socket == currentSocket else { return }
            connectionLost(cause: cause, now: now, jitter: jitter, into: &actions)
        case .frame(let socket, let frame):
            guard socket == currentSocket else { return }
            if var connection = takeConnection() {
                connection.lastReceived = now
                phase = .connected(connection)
            }
            received(frame, socket: socket, now: now, into: &actions)
        case .tick(let jitter):
            tick(now: now, jitter: jitter, into: &actions)
        }
    }

    // MARK: - Connecting

    private mutating func connect(
        attempt: Int, login: Login, queue: [Queued], now: Int64, into actions: inout [ConnectionAction]
    ) {
        let socket = nextSocket
        nextSocket += 1
        phase = .connecting(Attempt(number: attempt, socket: socket, since: now, login: login, queue: queue))
        actions.append(.openSocket(socket, server: server))
        actions.append(.state(state))
    }

    private mutating func connectionLost(
        cause: String, now: Int64, jitter: Double, into actions: inout [ConnectionAction]
    ) {
        let next: Int
        let closingReason: SignalErrorCode?
        let queue: [Queued]
        switch phase {
        case .connecting(let attempt), .authenticating(let attempt):
            next = attempt.number + 1
            closingReason = attempt.closingReason
            queue = attempt.queue
        case .connected(let connection):
            next = 0
            closingReason = connection.closingReason
            queue = []
        case .idle, .waiting, .stopped:
            return
        }
        switch closingReason {
        case .tokenExpired:
            return stop(.tokenExpired, failingWritten: .connectionLost, into: &actions)
        case .loggedOut:
            return stop(.loggedOut, failingWritten: .connectionLost, into: &actions)
        default:
            break
        }
        guard let login else { return }
        failWritten(.connectionLost, into: &actions)
        server = (server + 1) % max(settings.servers, 1)
        let exponential = settings.backoffBaseMillis << Int64(min(next, 20))
        let capped = min(settings.backoffMaxMillis, exponential)
        // "Equal jitter": half fixed, half random, so clients that lost the same server spread out.
        let delay = capped / 2 + Int64(Double(capped / 2) * min(max(jitter, 0), 1))
        phase = .waiting(
            Backoff(
                attempt: next, until: now + delay, delay: delay,
                cause: closingReason.map { "server closed: \($0.rawValue)" } ?? cause, login: login, queue: queue))
        actions.append(.state(state))
    }

    /// Stops: fails the requests written (with `failingWritten`, or by default as the stop says) and the sends
    /// waiting.
    private mutating func stop(
        _ reason: SignalStopReason, failingWritten: SignalClientError? = nil, into actions: inout [ConnectionAction]
    ) {
        failWritten(failingWritten ?? (reason == .loggedOut ? .stopped(reason) : .connectionLost), into: &actions)
        let waiting: [Queued] =
            switch phase {
            case .connecting(let attempt), .authenticating(let attempt): attempt.queue
            case .waiting(let backoff): backoff.queue
            case .idle, .connected, .stopped: []
            }
        for queued in waiting {
            actions.append(.completeSend(ticket: queued.ticket, .failure(.stopped(reason))))
        }
        phase = .stopped(reason)
        actions.append(.state(state))
    }

    /// Fails the requests written on the connection, oldest first (the connection keeps none).
    private mutating func failWritten(_ error: SignalClientError, into actions: inout [ConnectionAction]) {
        guard case .connected(var connection) = phase, !connection.inFlight.isEmpty else { return }
        let written = connection.inFlight.sorted(by: { $0.key < $1.key })
        connection.inFlight = [:]
        phase = .connected(connection)
        for entry in written { actions.append(fail(entry.value.pending, error)) }
    }

    /// Writes a request on the connection (the caller checked it is connected).
    private mutating func request(
        _ pending: Pending, now: Int64, into actions: inout [ConnectionAction], _ frame: (Int) -> ClientFrame
    ) {
        guard var connection = takeConnection() else { return }
        actions.append(request(pending, on: &connection, now: now, frame))
        phase = .connected(connection)
    }

    private mutating func request(
        _ pending: Pending, on connection: inout Connection, now: Int64, _ frame: (Int) -> ClientFrame
    ) -> ConnectionAction {
        let id = nextRequestId
        nextRequestId += 1
        connection.inFlight[id] = InFlight(pending: pending, sentAt: now)
        return .write(connection.socket, frame(id))
    }

    /// A ping on `connection`, noted for the clock offset.
    private mutating func ping(on connection: inout Connection, now: Int64) -> ConnectionAction {
        let id = nextPingId
        nextPingId += 1
        connection.lastPing = now
        connection.pings[id] = now
        return .write(connection.socket, .ping(.init(id: id)))
    }

    /// The connection moved out of the phase, which holds `.idle` until the caller puts it back changed; nil when
    /// not connected.
    ///
    /// Moved, not copied: copying it out (`if case .connected(var connection) = phase`) retained each of its
    /// fields, and writing it back released the old ones, ~700 instructions per frame a client received
    /// (callgrind, docs/benchmarks.md). Meanwhile its requests are held once, so they change in place.
    private mutating func takeConnection() -> Connection? {
        guard case .connected = phase else { return nil }
        var taken = Phase.idle
        swap(&taken, &phase)
        guard case .connected(let connection) = consume taken else { preconditionFailure("the phase changed") }
        return connection
    }

    /// Takes the written request that `requestId` answers off the connection.
    private mutating func answered(_ requestId: Int?) -> Pending? {
        guard let requestId, var connection = takeConnection() else { return nil }
        let entry = connection.inFlight.removeValue(forKey: requestId)
        phase = .connected(connection)
        return entry?.pending
    }

    /// Changes the login of the phase that has one (nothing in `idle` and `stopped`).
    private mutating func changeLogin(_ change: (inout Login) -> Void) {
        switch phase {
        case .connecting(var attempt):
            change(&attempt.login)
            phase = .connecting(attempt)
        case .authenticating(var attempt):
            change(&attempt.login)
            phase = .authenticating(attempt)
        case .connected(var connection):
            change(&connection.login)
            phase = .connected(connection)
        case .waiting(var backoff):
            change(&backoff.login)
            phase = .waiting(backoff)
        case .idle, .stopped:
            break
        }
    }

    /// Notes why the server closes the current socket.
    private mutating func closing(_ reason: SignalErrorCode) {
        switch phase {
        case .connecting(var attempt):
            attempt.closingReason = reason
            phase = .connecting(attempt)
        case .authenticating(var attempt):
            attempt.closingReason = reason
            phase = .authenticating(attempt)
        case .connected(var connection):
            connection.closingReason = reason
            phase = .connected(connection)
        case .idle, .waiting, .stopped:
            break
        }
    }

    /// Queues a send for the next connection; false when the queue is full.
    private mutating func enqueue(_ queued: Queued) -> Bool {
        switch phase {
        case .connecting(var attempt) where attempt.queue.count < settings.sendQueueLimit:
            phase = .idle  // holds nothing meanwhile, so that the queue changes in place
            attempt.queue.append(queued)
            phase = .connecting(attempt)
        case .authenticating(var attempt) where attempt.queue.count < settings.sendQueueLimit:
            phase = .idle
            attempt.queue.append(queued)
            phase = .authenticating(attempt)
        case .waiting(var backoff) where backoff.queue.count < settings.sendQueueLimit:
            phase = .idle
            backoff.queue.append(queued)
            phase = .waiting(backoff)
        default:
            return false
        }
        return true
    }

    private func fail(_ pending: Pending, _ error: SignalClientError) -> ConnectionAction {
        switch pending {
        case .send(let ticket): .completeSend(ticket: ticket, .failure(error))
        case .renew(let ticket): .completeRenew(ticket: ticket, .failure(error))
        case .presence(let ticket): .completePresence(ticket: ticket, .failure(error))
        case .calls(let ticket): .completeCalls(ticket: ticket, .failure(error))
        case .report(let ticket): .completeReport(ticket: ticket, error)
        case .devices(let ticket): .completeDevices(ticket: ticket, .failure(error))
        case .invitation(let ticket): .completeInvitation(ticket: ticket, .failure(error))
        case .match(let ticket): .completeMatch(ticket: ticket, .failure(error))
        }
    }

    // MARK: - Frames

    private mutating func received(
        _ frame: ServerFrame, socket: Int, now: Int64, into actions: inout [ConnectionAction]
    ) {
        switch frame {
        case .welcome(let welcome):
            guard case .authenticating(let attempt) = phase else { return }
            var login = attempt.login
            login.expiresAt = welcome.expiresAt
            // The login left when this step started; the server stamped its answer.
            clock.sample(sentAt: attempt.since, serverTime: welcome.serverTime, receivedAt: now)
            var connection = Connection(
                socket: socket, login: login, userId: welcome.userId, sessionId: welcome.sessionId,
                lastReceived: now, lastPing: now, closingReason: attempt.closingReason)
            phase = .connected(connection)
            actions.append(.state(state))
            phase = .idle  // holds nothing meanwhile, so that the requests change in place
            if login.subscribed {
                actions.append(request(.presence(ticket: -1), on: &connection, now: now) { .subscribe(.init(id: $0)) })
            }
            for queued in attempt.queue {
                actions.append(
                    request(.send(ticket: queued.ticket), on: &connection, now: now) {
                        .send(
                            .init(
                                id: $0, to: queued.to, body: queued.body, ttl: queued.ttl > 0 ? queued.ttl : nil,
                                push: queued.push, copy: queued.copy ? true : nil))
                    })
            }
            phase = .connected(connection)
        case .error(let error):
            if case .authenticating = phase, error.id == Self.loginRequestId || error.id == nil {
                actions.append(.closeSocket(socket))
                return stop(.loginRefused(error.code, error.message), into: &actions)
            }
            guard let pending = answered(error.id) else { return }
            actions.append(fail(pending, .refused(error.code, error.message)))
        case .answer(let answer):
            guard case .send(let ticket) = answered(answer.id) else { return }
            let result: Result<SendOutcome, SignalClientError> =
                switch answer.result {
                case .delivered: .success(.delivered(messageId: answer.messageId ?? "", sessions: answer.sessions ?? 1))
                case .queued: .success(.queued(messageId: answer.messageId ?? "", ttl: answer.ttl ?? 0))
                case .failed: .failure(.failed(answer.reason ?? .unknown, answer.message ?? "not delivered"))
                }
            actions.append(.completeSend(ticket: ticket, result))
        case .renewed(let renewed):
            changeLogin { $0.expiresAt = renewed.expiresAt }
            guard case .renew(let ticket) = answered(renewed.id) else { return }
            actions.append(.completeRenew(ticket: ticket, .success(renewed.expiresAt)))
        case .presence(let presence):
            guard case .presence(let ticket) = answered(presence.id), ticket >= 0 else { return }
            actions.append(.completePresence(ticket: ticket, .success(presence.online)))
        case .message(let message):
            actions.append(.deliver(message))
        case .presenceChanged(let change):
            actions.append(.presenceChanged(change))
        case .tokenWillExpire(let notice):
            actions.append(.tokenWillExpire(expiresAt: notice.expiresAt))
        case .heldResult(let result):
            actions.append(.heldResult(result))
        case .closing(let closing):
            self.closing(closing.reason)
        case .pong(let pong):
            guard let id = pong.id, var connection = takeConnection() else { return }
            if let sentAt = connection.pings.removeValue(forKey: id) {
                clock.sample(sentAt: sentAt, serverTime: pong.serverTime, receivedAt: now)
            }
            phase = .connected(connection)
        case .calls(let page):
            guard case .calls(let ticket) = answered(page.id) else { return }
            actions.append(.completeCalls(ticket: ticket, .success(page)))
        case .reported(let reported):
            guard case .report(let ticket) = answered(reported.id) else { return }
            actions.append(.completeReport(ticket: ticket, nil))
        case .devices(let devices):
            guard case .devices(let ticket) = answered(devices.id) else { return }
            actions.append(.completeDevices(ticket: ticket, .success(devices.devices)))
        case .callWithdrawn(let tombstone):
            actions.append(.callWithdrawn(tombstone))
        case .localInvitation(let invitation):
            // The caller's acknowledgement of an accept is automatic, as in RTM v1: the server completes the
            // accept only when it arrives.
            if invitation.state == .acceptPending {
                actions.append(.write(socket, .acknowledgeAccept(.init(invitationId: invitation.invitationId))))
            }
            actions.append(invitationAnswer(.local(invitation), requestId: invitation.id))
        case .remoteInvitation(let invitation):
            // So is the callee's receipt, which tells the caller the invitation arrived.
            if invitation.state == .invitationReceived {
                actions.append(.write(socket, .invitationReceived(.init(invitationId: invitation.invitationId))))
            }
            actions.append(invitationAnswer(.remote(invitation), requestId: invitation.id))
        case .placeCall(let order):
            actions.append(.callPlaced(order))
        case .matched(let match):
            actions.append(.matched(match))
        case .matchQueue(let status):
            guard case .match(let ticket) = answered(status.id) else { return }
            actions.append(.completeMatch(ticket: ticket, .success(status.waiting ? status.tags : [])))
        }
    }

    /// Completes the invitation method that `update` answers, or reports it as news.
    private mutating func invitationAnswer(_ update: InvitationUpdate, requestId: Int?) -> ConnectionAction {
        guard let id = requestId, case .connected(let connection) = phase,
            case .invitation(let ticket)? = connection.inFlight[id]?.pending
        else {
            return .invitationUpdate(update)
        }
        _ = answered(id)
        return .completeInvitation(ticket: ticket, .success(update))
    }

    // MARK: - Time

    /// When a `tick` next has something to do (a timeout, a reconnect, a ping), in the milliseconds of `now`;
    /// nil when nothing waits on time (never logged in, or stopped). The shell wakes up then, not on a fixed beat:
    /// an idle connection sleeps until its next ping.
    var nextDeadline: Int64? {
        // Called after every event: no arrays built.
        func earliest(_ due: Int64, _ other: Int64?) -> Int64 { other.map { min(due, $0) } ?? due }
        func queueDeadline(_ queue: [Queued]) -> Int64? {
            queue.first.map { $0.queuedAt + settings.sendQueueTimeoutMillis }  // the queue is oldest first
        }
        switch phase {
        case .idle, .stopped:
            return nil
        case .waiting(let backoff):
            return earliest(backoff.until, queueDeadline(backoff.queue))
        case .connecting(let attempt), .authenticating(let attempt):
            return earliest(attempt.since + settings.connectTimeoutMillis, queueDeadline(attempt.queue))
        case .connected(let connection):
            let alive = min(
                connection.lastReceived + settings.livenessTimeoutMillis,
                connection.lastPing + settings.pingIntervalMillis)
            var oldestRequest: Int64?
            for entry in connection.inFlight.values { oldestRequest = min(oldestRequest ?? entry.sentAt, entry.sentAt) }
            return earliest(alive, oldestRequest.map { $0 + settings.requestTimeoutMillis })
        }
    }

    private mutating func tick(now: Int64, jitter: Double, into actions: inout [ConnectionAction]) {
        switch phase {
        case .waiting(let backoff) where now >= backoff.until:
            connect(attempt: backoff.attempt, login: backoff.login, queue: backoff.queue, now: now, into: &actions)
        case .connecting(let attempt), .authenticating(let attempt):
            if now - attempt.since >= settings.connectTimeoutMillis {
                actions.append(.closeSocket(attempt.socket))
                connectionLost(cause: "connecting timed out", now: now, jitter: jitter, into: &actions)
            }
        case .connected(var connection):
            if now - connection.lastReceived >= settings.livenessTimeoutMillis {
                actions.append(.closeSocket(connection.socket))
                connectionLost(
                    cause: "nothing from the server for \(settings.livenessTimeoutMillis / 1000) s", now: now,
                    jitter: jitter, into: &actions)
            } else if now - connection.lastPing >= settings.pingIntervalMillis {
                // A ping never answered within the request timeout is forgotten (the liveness check handles a
                // server that stopped answering).
                connection.pings = connection.pings.filter { now - $0.value < settings.requestTimeoutMillis }
                actions.append(ping(on: &connection, now: now))
                phase = .connected(connection)
            }
        default:
            break
        }
        for queued in expireQueued(now: now) {
            actions.append(
                .completeSend(
                    ticket: queued.ticket,
                    .failure(.noConnection(waitedMillis: settings.sendQueueTimeoutMillis))))
        }
        for pending in expireWritten(now: now) {
            actions.append(fail(pending, .noAnswer))
        }
    }

    /// Takes the sends that waited too long for a connection out of the queue, oldest first.
    private mutating func expireQueued(now: Int64) -> [Queued] {
        func isExpired(_ queued: Queued) -> Bool { now - queued.queuedAt >= settings.sendQueueTimeoutMillis }
        switch phase {
        case .connecting(var attempt) where attempt.queue.contains(where: isExpired):
            let expired = attempt.queue.filter(isExpired)
            attempt.queue.removeAll(where: isExpired)
            phase = .connecting(attempt)
            return expired
        case .authenticating(var attempt) where attempt.queue.contains(where: isExpired):
            let expired = attempt.queue.filter(isExpired)
            attempt.queue.removeAll(where: isExpired)
            phase = .authenticating(attempt)
            return expired
        case .waiting(var backoff) where backoff.queue.contains(where: isExpired):
            let expired = backoff.queue.filter(isExpired)
            backoff.queue.removeAll(where: isExpired)
            phase = .waiting(backoff)
            return expired
        default:
            return []
        }
    }

    /// Takes the requests that waited too long for an answer off the connection, oldest first.
    private mutating func expireWritten(now: Int64) -> [Pending] {
        guard case .connected(var connection) = phase,
            connection.inFlight.values.contains(where: { now - $0.sentAt >= settings.requestTimeoutMillis })
        else { return [] }
        var expired: [Pending] = []
        for (id, entry) in connection.inFlight.sorted(by: { $0.key < $1.key })
        where now - entry.sentAt >= settings.requestTimeoutMillis {
            connection.inFlight[id] = nil
            expired.append(entry.pending)
        }
        phase = .connected(connection)
        return expired
    }
}
