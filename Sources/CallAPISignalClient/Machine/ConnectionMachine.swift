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
    case openSocket(Int)
    case closeSocket(Int)
    case write(Int, ClientFrame)
    case completeSend(ticket: Int, Result<SendOutcome, SignalClientError>)
    case completeRenew(ticket: Int, Result<Int64, SignalClientError>)
    case completePresence(ticket: Int, Result<[String], SignalClientError>)
    case completeCalls(ticket: Int, Result<ServerFrame.CallsPage, SignalClientError>)
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
    }

    enum Phase: Sendable, Equatable {
        case idle
        case connecting(attempt: Int, socket: Int, since: Int64)
        case authenticating(attempt: Int, socket: Int, since: Int64)
        case connected(socket: Int)
        case waiting(attempt: Int, until: Int64)
        case stopped(SignalStopReason)
    }

    /// A request written to the socket, waiting for its answer.
    enum Pending: Sendable, Equatable {
        case send(ticket: Int)
        case renew(ticket: Int)
        case presence(ticket: Int)
        case calls(ticket: Int)
        case devices(ticket: Int)
        case invitation(ticket: Int)
        case match(ticket: Int)
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
    private(set) var token: String?
    private(set) var queue: [Queued] = []
    private var inFlight: [Int: (pending: Pending, sentAt: Int64)] = [:]
    private var nextRequestId = 1
    private var nextSocket = 1
    private var lastReceived: Int64 = 0
    private var lastPing: Int64 = 0
    private var subscribed = false
    private var closingReason: SignalErrorCode?
    private static let loginRequestId = 0

    init(settings: Settings) {
        self.settings = settings
    }

    /// The state to show for the current phase.
    var state: SignalConnectionState {
        switch phase {
        case .idle: .idle
        case .connecting(let attempt, _, _), .authenticating(let attempt, _, _): .connecting(attempt: attempt)
        case .connected: .connected(userId: userId ?? "", sessionId: sessionId ?? "")
        case .waiting(let attempt, _): .reconnecting(attempt: attempt, delayMillis: lastDelay, cause: lastCause)
        case .stopped(let reason): .stopped(reason)
        }
    }
    private(set) var userId: String?
    private(set) var sessionId: String?
    private(set) var expiresAt: Int64?
    private var lastDelay: Int64 = 0
    private var lastCause = ""

    private var currentSocket: Int? {
        switch phase {
        case .connecting(_, let socket, _), .authenticating(_, let socket, _), .connected(let socket): socket
        default: nil
        }
    }

    /// Why a request that needs the connection fails while it is not connected.
    private var notConnectedError: SignalClientError {
        switch phase {
        case .idle: .notLoggedIn
        case .stopped(let reason): .stopped(reason)
        default: .timedOut("not connected right now; try again once connected")
        }
    }

    /// Applies `event`, which happened at `now` (ms since 1970), and returns what to do.
    mutating func handle(_ event: ConnectionEvent, now: Int64) -> [ConnectionAction] {
        switch event {
        case .login(let token):
            self.token = token
            switch phase {
            case .idle, .stopped:
                return connect(attempt: 0, now: now)
            case .waiting:
                return connect(attempt: 0, now: now)
            default:
                return []  // already connecting or connected: the new token is used from the next login on
            }
        case .logout:
            var actions: [ConnectionAction] = []
            if let socket = currentSocket {
                if case .connected = phase { actions.append(.write(socket, .logout(.init()))) }
                actions.append(.closeSocket(socket))
            }
            return actions + stop(.loggedOut)
        case .renew(let ticket, let token):
            self.token = token
            guard case .connected(let socket) = phase else {
                // Kept for the next login.
                return [.completeRenew(ticket: ticket, .success(expiresAt ?? 0))]
            }
            return write(socket, pending: .renew(ticket: ticket), now: now) { .renew(.init(id: $0, token: token)) }
        case .send(let ticket, let to, let body, let ttl, let push, let copy):
            switch phase {
            case .connected(let socket):
                return write(socket, pending: .send(ticket: ticket), now: now) {
                    .send(
                        .init(id: $0, to: to, body: body, ttl: ttl > 0 ? ttl : nil, push: push, copy: copy ? true : nil)
                    )
                }
            case .idle:
                return [.completeSend(ticket: ticket, .failure(.notLoggedIn))]
            case .stopped(let reason):
                return [.completeSend(ticket: ticket, .failure(.stopped(reason)))]
            case .connecting, .authenticating, .waiting:
                guard queue.count < settings.sendQueueLimit else {
                    return [.completeSend(ticket: ticket, .failure(.queueFull(settings.sendQueueLimit)))]
                }
                queue.append(
                    Queued(ticket: ticket, to: to, body: body, ttl: ttl, push: push, copy: copy, queuedAt: now))
                return []
            }
        case .devices(let ticket, let request):
            guard case .connected(let socket) = phase else {
                return [.completeDevices(ticket: ticket, .failure(notConnectedError))]
            }
            return write(socket, pending: .devices(ticket: ticket), now: now) { id in
                switch request {
                case .register(let device): .registerDevice(.init(id: id, device: device))
                case .list: .devices(.init(id: id))
                case .remove(let deviceId): .removeDevice(.init(id: id, deviceId: deviceId))
                }
            }
        case .presence(let ticket, let subscribe):
            if subscribe { subscribed = true }
            guard case .connected(let socket) = phase else {
                let error: SignalClientError =
                    switch phase {
                    case .idle: .notLoggedIn
                    case .stopped(let reason): .stopped(reason)
                    default: .timedOut("not connected right now; the subscription is renewed on reconnect")
                    }
                return [.completePresence(ticket: ticket, .failure(error))]
            }
            return write(socket, pending: .presence(ticket: ticket), now: now) {
                subscribe ? .subscribe(.init(id: $0)) : .users(.init(id: $0))
            }
        case .calls(let ticket, let request):
            guard case .connected(let socket) = phase else {
                let error: SignalClientError =
                    switch phase {
                    case .idle: .notLoggedIn
                    case .stopped(let reason): .stopped(reason)
                    default: .timedOut("not connected right now; ask again once connected")
                    }
                return [.completeCalls(ticket: ticket, .failure(error))]
            }
            return write(socket, pending: .calls(ticket: ticket), now: now) {
                var request = request
                request.id = $0
                return .calls(request)
            }
        case .invitation(let ticket, let request):
            guard case .connected(let socket) = phase else {
                return [.completeInvitation(ticket: ticket, .failure(notConnectedError))]
            }
            return write(socket, pending: .invitation(ticket: ticket), now: now) { id in
                switch request {
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
        case .match(let ticket, let request):
            guard case .connected(let socket) = phase else {
                return [.completeMatch(ticket: ticket, .failure(notConnectedError))]
            }
            return write(socket, pending: .match(ticket: ticket), now: now) { id in
                switch request {
                case .enter(let tags): .matchEnter(.init(id: id, tags: tags))
                case .leave: .matchLeave(.init(id: id))
                }
            }
        case .socketOpened(let socket):
            guard case .connecting(let attempt, socket, _) = phase, let token else { return [] }
            phase = .authenticating(attempt: attempt, socket: socket, since: now)
            lastReceived = now
            return [.write(socket, .login(.init(id: Self.loginRequestId, token: token)))]
        case .socketClosed(let socket, let cause, let jitter):
            guard socket == currentSocket else { return [] }
            return connectionLost(cause: cause, now: now, jitter: jitter)
        case .frame(let socket, let frame):
            guard socket == currentSocket else { return [] }
            lastReceived = now
            return received(frame, socket: socket, now: now)
        case .tick(let jitter):
            return tick(now: now, jitter: jitter)
        }
    }

    // MARK: - Connecting

    private mutating func connect(attempt: Int, now: Int64) -> [ConnectionAction] {
        let socket = nextSocket
        nextSocket += 1
        closingReason = nil
        phase = .connecting(attempt: attempt, socket: socket, since: now)
        return [.openSocket(socket), .state(state)]
    }

    private mutating func connectionLost(cause: String, now: Int64, jitter: Double) -> [ConnectionAction] {
        var actions: [ConnectionAction] = []
        for (_, entry) in inFlight.sorted(by: { $0.key < $1.key }) {
            actions.append(fail(entry.pending, .connectionLost))
        }
        inFlight = [:]
        switch closingReason {
        case .tokenExpired:
            return actions + stop(.tokenExpired)
        case .loggedOut:
            return actions + stop(.loggedOut)
        default:
            break
        }
        let attempt: Int =
            switch phase {
            case .connecting(let attempt, _, _), .authenticating(let attempt, _, _): attempt + 1
            default: 0
            }
        let exponential = settings.backoffBaseMillis << Int64(min(attempt, 20))
        let capped = min(settings.backoffMaxMillis, exponential)
        // "Equal jitter": half fixed, half random, so clients that lost the same server spread out.
        let delay = capped / 2 + Int64(Double(capped / 2) * min(max(jitter, 0), 1))
        lastDelay = delay
        lastCause = closingReason.map { "server closed: \($0.rawValue)" } ?? cause
        phase = .waiting(attempt: attempt, until: now + delay)
        return actions + [.state(state)]
    }

    private mutating func stop(_ reason: SignalStopReason) -> [ConnectionAction] {
        var actions: [ConnectionAction] = []
        for (_, entry) in inFlight.sorted(by: { $0.key < $1.key }) {
            actions.append(fail(entry.pending, reason == .loggedOut ? .stopped(reason) : .connectionLost))
        }
        inFlight = [:]
        for queued in queue {
            actions.append(.completeSend(ticket: queued.ticket, .failure(.stopped(reason))))
        }
        queue = []
        subscribed = false
        phase = .stopped(reason)
        return actions + [.state(state)]
    }

    private mutating func write(
        _ socket: Int, pending: Pending, now: Int64, _ frame: (Int) -> ClientFrame
    ) -> [ConnectionAction] {
        let id = nextRequestId
        nextRequestId += 1
        inFlight[id] = (pending, now)
        return [.write(socket, frame(id))]
    }

    private func fail(_ pending: Pending, _ error: SignalClientError) -> ConnectionAction {
        switch pending {
        case .send(let ticket): .completeSend(ticket: ticket, .failure(error))
        case .renew(let ticket): .completeRenew(ticket: ticket, .failure(error))
        case .presence(let ticket): .completePresence(ticket: ticket, .failure(error))
        case .calls(let ticket): .completeCalls(ticket: ticket, .failure(error))
        case .devices(let ticket): .completeDevices(ticket: ticket, .failure(error))
        case .invitation(let ticket): .completeInvitation(ticket: ticket, .failure(error))
        case .match(let ticket): .completeMatch(ticket: ticket, .failure(error))
        }
    }

    // MARK: - Frames

    private mutating func received(_ frame: ServerFrame, socket: Int, now: Int64) -> [ConnectionAction] {
        switch frame {
        case .welcome(let welcome):
            guard case .authenticating = phase else { return [] }
            phase = .connected(socket: socket)
            userId = welcome.userId
            sessionId = welcome.sessionId
            expiresAt = welcome.expiresAt
            lastPing = now
            var actions: [ConnectionAction] = [.state(state)]
            if subscribed {
                actions += write(socket, pending: .presence(ticket: -1), now: now) { .subscribe(.init(id: $0)) }
            }
            let waiting = queue
            queue = []
            for queued in waiting {
                actions += write(socket, pending: .send(ticket: queued.ticket), now: now) {
                    .send(
                        .init(
                            id: $0, to: queued.to, body: queued.body, ttl: queued.ttl > 0 ? queued.ttl : nil,
                            push: queued.push, copy: queued.copy ? true : nil))
                }
            }
            return actions
        case .error(let error):
            if case .authenticating = phase, error.id == Self.loginRequestId || error.id == nil {
                return [.closeSocket(socket)] + stop(.loginRefused(error.code, error.message))
            }
            guard let id = error.id, let entry = inFlight.removeValue(forKey: id) else { return [] }
            return [fail(entry.pending, .refused(error.code, error.message))]
        case .answer(let answer):
            guard let id = answer.id, let entry = inFlight.removeValue(forKey: id),
                case .send(let ticket) = entry.pending
            else { return [] }
            let result: Result<SendOutcome, SignalClientError> =
                switch answer.result {
                case .delivered: .success(.delivered(messageId: answer.messageId ?? "", sessions: answer.sessions ?? 1))
                case .queued: .success(.queued(messageId: answer.messageId ?? "", ttl: answer.ttl ?? 0))
                case .failed: .failure(.failed(answer.reason ?? .unknown, answer.message ?? "not delivered"))
                }
            return [.completeSend(ticket: ticket, result)]
        case .renewed(let renewed):
            expiresAt = renewed.expiresAt
            guard let id = renewed.id, let entry = inFlight.removeValue(forKey: id),
                case .renew(let ticket) = entry.pending
            else { return [] }
            return [.completeRenew(ticket: ticket, .success(renewed.expiresAt))]
        case .presence(let presence):
            guard let id = presence.id, let entry = inFlight.removeValue(forKey: id),
                case .presence(let ticket) = entry.pending
            else { return [] }
            return ticket < 0 ? [] : [.completePresence(ticket: ticket, .success(presence.online))]
        case .message(let message):
            return [.deliver(message)]
        case .presenceChanged(let change):
            return [.presenceChanged(change)]
        case .tokenWillExpire(let notice):
            return [.tokenWillExpire(expiresAt: notice.expiresAt)]
        case .heldResult(let result):
            return [.heldResult(result)]
        case .closing(let closing):
            closingReason = closing.reason
            return []
        case .pong:
            return []
        case .calls(let page):
            guard let id = page.id, let entry = inFlight.removeValue(forKey: id),
                case .calls(let ticket) = entry.pending
            else { return [] }
            return [.completeCalls(ticket: ticket, .success(page))]
        case .devices(let devices):
            guard let id = devices.id, let entry = inFlight.removeValue(forKey: id),
                case .devices(let ticket) = entry.pending
            else { return [] }
            return [.completeDevices(ticket: ticket, .success(devices.devices))]
        case .callWithdrawn(let tombstone):
            return [.callWithdrawn(tombstone)]
        case .localInvitation(let invitation):
            // The caller's acknowledgement of an accept is automatic, as in RTM v1: the server completes the
            // accept only when it arrives.
            let ack: [ConnectionAction] =
                invitation.state == .acceptPending
                ? [.write(socket, .acknowledgeAccept(.init(invitationId: invitation.invitationId)))] : []
            return ack + invitationAnswer(.local(invitation), requestId: invitation.id)
        case .remoteInvitation(let invitation):
            // So is the callee's receipt, which tells the caller the invitation arrived.
            let receipt: [ConnectionAction] =
                invitation.state == .invitationReceived
                ? [.write(socket, .invitationReceived(.init(invitationId: invitation.invitationId)))] : []
            return receipt + invitationAnswer(.remote(invitation), requestId: invitation.id)
        case .placeCall(let order):
            return [.callPlaced(order)]
        case .matched(let match):
            return [.matched(match)]
        case .matchQueue(let status):
            guard let id = status.id, let entry = inFlight.removeValue(forKey: id),
                case .match(let ticket) = entry.pending
            else { return [] }
            return [.completeMatch(ticket: ticket, .success(status.waiting ? status.tags : []))]
        }
    }

    /// Completes the invitation method that `update` answers, or reports it as news.
    private mutating func invitationAnswer(_ update: InvitationUpdate, requestId: Int?) -> [ConnectionAction] {
        guard let id = requestId, case .invitation(let ticket)? = inFlight[id]?.pending else {
            return [.invitationUpdate(update)]
        }
        inFlight[id] = nil
        return [.completeInvitation(ticket: ticket, .success(update))]
    }

    // MARK: - Time

    private mutating func tick(now: Int64, jitter: Double) -> [ConnectionAction] {
        var actions: [ConnectionAction] = []
        switch phase {
        case .waiting(let attempt, let until) where now >= until:
            actions += connect(attempt: attempt, now: now)
        case .connecting(_, let socket, let since), .authenticating(_, let socket, let since):
            if now - since >= settings.connectTimeoutMillis {
                actions +=
                    [.closeSocket(socket)] + connectionLost(cause: "connecting timed out", now: now, jitter: jitter)
            }
        case .connected(let socket):
            if now - lastReceived >= settings.livenessTimeoutMillis {
                actions +=
                    [.closeSocket(socket)]
                    + connectionLost(
                        cause: "nothing from the server for \(settings.livenessTimeoutMillis / 1000) s", now: now,
                        jitter: jitter)
            } else if now - lastPing >= settings.pingIntervalMillis {
                lastPing = now
                actions.append(.write(socket, .ping(.init())))
            }
        default:
            break
        }
        let expired = queue.filter { now - $0.queuedAt >= settings.sendQueueTimeoutMillis }
        if !expired.isEmpty {
            queue.removeAll { now - $0.queuedAt >= settings.sendQueueTimeoutMillis }
            for queued in expired {
                actions.append(
                    .completeSend(
                        ticket: queued.ticket,
                        .failure(
                            .timedOut("no connection to the server for \(settings.sendQueueTimeoutMillis / 1000) s"))))
            }
        }
        for (id, entry) in inFlight.sorted(by: { $0.key < $1.key })
        where now - entry.sentAt >= settings.requestTimeoutMillis {
            inFlight[id] = nil
            actions.append(fail(entry.pending, .timedOut("no answer from the server")))
        }
        return actions
    }
}
