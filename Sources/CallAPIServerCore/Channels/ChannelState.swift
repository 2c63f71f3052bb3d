import CallAPISignalProtocol

/// The RTC channels as a pure state machine: connections, members per channel, tokens, rejoin bars and the
/// watchdog.
///
/// A member's liveness is the socket's: the server pings every WebSocket and closes one that stops answering, which
/// arrives here as ``ChannelEvent/disconnected(_:)`` (`memberLeft` reason dropped). Media calls may go quiet for
/// long stretches, so members need not send frames to stay.
///
/// Feed it ``ChannelEvent``s with the current time; it returns the ``ChannelAction``s to perform. No I/O, no clock.
package struct ChannelState: Sendable {
    /// One connection to the channel endpoint.
    typealias Connection = Sessions<Phase, RelayedSignal>.Session

    /// A relayed signal in an outbox: whom to tell if it is never written.
    struct RelayedSignal: Sendable, Equatable {
        var sender: SessionID
    }

    /// Where a connection is in its life.
    enum Phase: Sendable, Equatable {
        /// Connected; no `join` yet.
        case awaitingJoin
        /// The `join`'s token is being checked.
        case verifying(ChannelClientFrame.Join)
        /// In a cluster: the token was accepted (it expires at `expiresAt`) and the channel's home is being claimed.
        case claiming(ChannelClientFrame.Join, expiresAt: Int64)
        /// A member of a channel.
        case member(Membership)
    }

    /// A connection's membership.
    struct Membership: Sendable, Equatable {
        var channel: String
        var member: ChannelMember
        var lease: TokenLease
        var uid: UInt { member.uid }
    }

    /// One channel.
    struct Room: Sendable, Equatable {
        var members = RoomMembers()
        /// Whether the channel has had two users at once (the watchdog only watches such channels).
        var hadTwo = false
        /// Since when its only user (on one device or several) has been alone, after it had two.
        var aloneSince: Int64?
    }

    /// A uid in a channel, for rejoin bars.
    struct BarKey: Hashable, Sendable {
        var channel: String
        var uid: UInt
    }

    /// Why a member is removed.
    enum Cause: Sendable, Equatable {
        case quit
        case lost
        case kicked(String)
        case tokenExpired
        case replaced
        case watchdog
        case shutdown
        case slowConsumer
        case flooding(String)
    }

    package let limits: ChannelLimits
    /// The ICE servers handed to each member that joins.
    package let ice: ICESettings
    /// Whether each channel's first join here claims it in a cluster.
    package let topology: ChannelTopology
    /// How many claims of each channel are in flight (``ChannelAction/claimHome(_:channel:)``): a channel's claim is
    /// released only when it has no member here and no claim in flight.
    private(set) var claims: [String: Int] = [:]
    /// The connections: table, order, deadlines, outboxes and rate limit.
    private(set) var connections: Sessions<Phase, RelayedSignal>
    private(set) var rooms: [String: Room] = [:]
    private(set) var bars: [BarKey: Int64] = [:]
    /// When each kicked uid was kicked from its channel (ms since 1970): its tokens issued until then may not join
    /// that channel again. Kept for the longest token lifetime, and at most ``ChannelLimits/maxRevocations``.
    private(set) var revocations: [BarKey: Int64] = [:]
    /// How many kicks' revocations are remembered now.
    package var revocationCount: Int { revocations.count }
    /// When the revocations are next pruned (once a minute: they live for days).
    private var nextRevocationPrune: Int64 = 0
    private(set) var isShuttingDown = false
    /// Frames and bytes queued for all connections' writers.
    package var queuedFrames: Int { connections.queuedFrames }
    package var queuedBytes: Int { connections.queuedBytes }

    package init(limits: ChannelLimits, ice: ICESettings = ICESettings(), topology: ChannelTopology = .single) {
        self.limits = limits
        self.ice = ice
        self.topology = topology
        connections = Sessions(
            rateLimit: RateLimit(
                ratePerSecond: limits.ratePerSecond, burst: limits.burst, maxRefusalsInARow: limits.maxRefusalsInARow),
            maxOutboxFrames: limits.maxOutboxFrames, maxOutboxBytes: limits.maxOutboxBytes)
    }

    /// Channels with at least one member.
    package var channelCount: Int { rooms.count }
    /// Members of all channels.
    package var memberCount: Int { rooms.values.reduce(0) { $0 + $1.members.count } }
    /// Open connections, members or not.
    package var connectionCount: Int { connections.count }
    /// The uids in `channel`, sorted, each once however many devices it is on.
    package func members(of channel: String) -> [UInt] { rooms[channel]?.members.uids.sorted() ?? [] }
    /// The members of `channel` (uid and device), in join order.
    package func devices(of channel: String) -> [ChannelMember] { rooms[channel]?.members.members ?? [] }
    /// Until when `uid` may not rejoin `channel` (ms since 1970), if it is barred.
    package func barredUntil(channel: String, uid: UInt) -> Int64? { bars[BarKey(channel: channel, uid: uid)] }
    /// Frames and estimated bytes queued for a connection's writer and not yet written.
    package func outbox(of connection: SessionID) -> (frames: Int, bytes: Int)? {
        connections[connection].map { ($0.outbox.frames, $0.outbox.bytes) }
    }
    /// The channel and member (uid and device) of a connection that joined.
    package func member(_ id: SessionID) -> (channel: String, member: ChannelMember)? {
        guard case .member(let membership) = connections[id]?.phase else { return nil }
        return (membership.channel, membership.member)
    }

    // MARK: - Events

    /// Applies `event`, which happened at `now` (ms since 1970 on the server's clock), and returns what to do.
    package mutating func handle(_ event: ChannelEvent, now: Int64) -> [ChannelAction] {
        var actions: [ChannelAction] = []
        handle(event, now: now, into: &actions)
        return actions
    }

    /// Applies `event` at `now`, appending what to do to `actions` (a buffer the caller may reuse).
    ///
    /// Every frame is counted against its receiver's outbox where it is produced (``enqueue(_:to:into:)``); a
    /// connection found too slow is closed once the event's other steps are done, as its last actions.
    package mutating func handle(_ event: consuming ChannelEvent, now: Int64, into actions: inout [ChannelAction]) {
        if case .written(let id, let frames) = event {
            connections.written(frames, by: id)
            return
        }
        apply(consume event, now: now, into: &actions)
        while let id = connections.nextSlowConsumer() { dropSlowConsumer(id, now: now, into: &actions) }
    }

    private mutating func apply(_ event: consuming ChannelEvent, now: Int64, into actions: inout [ChannelAction]) {
        switch consume event {
        case .written:
            break  // handled in `handle`
        case .connected(let id):
            guard connections.open(id, phase: .awaitingJoin, now: now) else { return }
            scheduleTick(for: id)
            if isShuttingDown {
                failJoin(id, .serverShutdown, "the server is shutting down; join again in a moment", into: &actions)
            }
        case .frame(let id, let frame):
            if admit(id, now: now, into: &actions) { receive(frame, from: id, now: now, into: &actions) }
        case .undecodable(let id, let error):
            if admit(id, now: now, into: &actions) { refuse(id, .malformed, error.message, into: &actions) }
        case .oversized(let id, let bytes):
            if admit(id, now: now, into: &actions) {
                refuse(
                    id, .tooLarge, "the frame is \(bytes) bytes; the limit is \(limits.maxFrameBytes)", into: &actions)
            }
        case .binary(let id):
            if admit(id, now: now, into: &actions) {
                refuse(id, .malformed, "send frames as JSON text messages", into: &actions)
            }
        case .tokenChecked(let id, let purpose, let result):
            tokenChecked(id, purpose: purpose, result: result, now: now, into: &actions)
        case .homeFound(let id, let channel, let home):
            homeFound(id, channel: channel, home, now: now, into: &actions)
        case .disconnected(let id):
            guard let connection = connections[id] else { return }
            if case .member = connection.phase {
                remove(id, .lost, now: now, into: &actions)
            } else {
                connections.close(id)
            }
        case .tick:
            tick(now: now, into: &actions)
        case .shutdown:
            isShuttingDown = true
            for id in connections.order {
                if case .member = connections[id]?.phase {
                    remove(id, .shutdown, now: now, into: &actions)
                } else {
                    failJoin(id, .serverShutdown, "the server is shutting down; join again in a moment", into: &actions)
                }
            }
        }
    }

    /// Counts a frame against the connection's rate limit. Returns whether to process the frame; when not, what to
    /// do instead has been appended (nothing for an unknown connection; over the limit, one refusal per run, then a
    /// close).
    private mutating func admit(_ id: SessionID, now: Int64, into actions: inout [ChannelAction]) -> Bool {
        switch connections.admit(id, now: now) {
        case .admitted:
            return true
        case .unknownSession, .dropQuietly:
            return false
        case .refuseFirst(let message):
            refuse(id, .rateLimited, message, into: &actions)
            return false
        case .close(let message):
            if case .member = connections[id]?.phase {
                remove(id, .flooding(message), now: now, into: &actions)
            } else {
                failJoin(id, .rateLimited, message, into: &actions)
            }
            return false
        }
    }

    /// A bad frame: an `error` for members; before joining, `joinFailed` and close (`join` must come first).
    private mutating func refuse(
        _ id: SessionID, _ code: ChannelErrorCode, _ message: String, into actions: inout [ChannelAction]
    ) {
        guard let connection = connections[id] else { return }
        if case .awaitingJoin = connection.phase {
            failJoin(id, code, "the first frame must be a valid join: \(message)", into: &actions)
        } else {
            enqueue(.error(.init(code: code, message: message)), to: id, into: &actions)
        }
    }

    private mutating func receive(
        _ frame: ChannelClientFrame, from id: SessionID, now: Int64, into actions: inout [ChannelAction]
    ) {
        guard let connection = connections[id] else { return }
        switch connection.phase {
        case .awaitingJoin:
            guard case .join(let join) = frame else {
                return failJoin(
                    id, .malformed,
                    "the first frame must be {\"type\":\"join\",\"channel\":…,\"uid\":…,\"token\":…}, not \"\(frame.type)\"",
                    into: &actions)
            }
            startJoin(id, join, into: &actions)
        case .verifying, .claiming:
            if frame == .leave {
                connections.close(id)
                actions.append(.close(id, code: 1000))
                return
            }
            enqueue(
                .error(.init(code: .malformed, message: "the join is still being checked; wait for joined")), to: id,
                into: &actions)
        case .member(let membership):
            if membership.lease.isExpired(at: now) {
                return remove(id, .tokenExpired, now: now, into: &actions)
            }
            switch frame {
            case .join:
                enqueue(
                    .error(
                        .init(
                            code: .malformed,
                            message:
                                "this socket already joined channel \(membership.channel) as uid \(membership.member); "
                                + "one socket is one membership")), to: id, into: &actions)
            case .signal(let signal):
                relay(signal, from: id, membership, into: &actions)
            case .renew(let renew):
                var renewing = membership
                guard renewing.lease.startRenewal() else {
                    return enqueue(
                        .error(.init(code: .malformed, message: "a renewal is already being checked")), to: id,
                        into: &actions)
                }
                guard !renew.token.isEmpty else {
                    return enqueue(
                        .error(.init(code: .invalidToken, message: "the renew frame has an empty token")), to: id,
                        into: &actions)
                }
                connections.setPhase(.member(renewing), of: id)
                actions.append(.verifyToken(id, token: renew.token, purpose: .renew))
            case .leave:
                remove(id, .quit, now: now, into: &actions)
            }
        }
    }

    private mutating func startJoin(
        _ id: SessionID, _ join: ChannelClientFrame.Join, into actions: inout [ChannelAction]
    ) {
        guard join.uid > 0 else {
            return failJoin(id, .malformed, "\"uid\" must be a positive integer", into: &actions)
        }
        guard ChannelProtocol.isValidChannel(join.channel) else {
            return failJoin(id, .malformed, "\"channel\" must be 1-64 characters of A-Z a-z 0-9 . _ -", into: &actions)
        }
        if let device = join.device, let problem = PushDevice.deviceIdProblem(device, field: "device") {
            return failJoin(id, .malformed, problem, into: &actions)
        }
        guard !join.token.isEmpty else {
            return failJoin(id, .invalidToken, "the join frame has an empty token", into: &actions)
        }
        connections.setPhase(.verifying(join), of: id)
        actions.append(.verifyToken(id, token: join.token, purpose: .join))
    }

    // MARK: - Tokens

    private struct Refusal: Error {
        var code: ChannelErrorCode
        var message: String
    }

    /// The token's expiry if it is valid for `uid` in `channel` now.
    private func accept(_ result: ChannelTokenCheck, channel: String, uid: UInt, now: Int64) -> Result<Int64, Refusal> {
        switch result {
        case .invalid(let code, let message):
            return .failure(Refusal(code: code, message: message))
        case .valid(let userId, let tokenChannel, let expiresAt, let issuedAt):
            guard userId == String(uid) else {
                return .failure(Refusal(code: .wrongUser, message: "the token is for user \(userId), not uid \(uid)"))
            }
            if tokenChannel == ChannelProtocol.anyChannel {
                guard limits.allowAnyChannelTokens else {
                    return .failure(
                        Refusal(
                            code: .wrongChannel,
                            message:
                                "this server does not accept tokens for any channel (\"chn\":\"*\"); "
                                + "get a token for channel \(channel)"))
                }
            } else if tokenChannel != channel {
                return .failure(
                    Refusal(code: .wrongChannel, message: "the token is for channel \(tokenChannel), not \(channel)"))
            }
            guard expiresAt > now else {
                return .failure(
                    Refusal(
                        code: .tokenExpired,
                        message: "the token expired \((now - expiresAt) / 1000) s ago; get a new one"
                    ))
            }
            if let revokedAt = revocations[BarKey(channel: channel, uid: uid)], issuedAt < revokedAt {
                return .failure(
                    Refusal(
                        code: .tokenRevoked,
                        message:
                            "the token was issued before uid \(uid) was removed from channel \(channel); "
                            + "get a new one"))
            }
            return .success(expiresAt)
        }
    }

    private mutating func tokenChecked(
        _ id: SessionID, purpose: ChannelTokenPurpose, result: ChannelTokenCheck, now: Int64,
        into actions: inout [ChannelAction]
    ) {
        guard let connection = connections[id] else { return }
        switch (purpose, connection.phase) {
        case (.join, .verifying(let join)):
            switch accept(result, channel: join.channel, uid: join.uid, now: now) {
            case .failure(let refusal):
                failJoin(id, refusal.code, refusal.message, into: &actions)
            case .success(let expiresAt):
                guard topology == .cluster, rooms[join.channel] == nil else {
                    return admit(id, join, expiresAt: expiresAt, now: now, into: &actions)
                }
                connections.setPhase(.claiming(join, expiresAt: expiresAt), of: id)
                claims[join.channel, default: 0] += 1
                actions.append(.claimHome(id, channel: join.channel))
            }
        case (.renew, .member(var membership)):
            switch accept(result, channel: membership.channel, uid: membership.uid, now: now) {
            case .failure(let refusal):
                membership.lease.renewalRefused()
                connections.setPhase(.member(membership), of: id)
                enqueue(
                    .error(.init(code: refusal.code, message: "renewal refused: \(refusal.message)")), to: id,
                    into: &actions)
            case .success(let expiresAt):
                membership.lease.renewed(until: expiresAt)
                connections.setPhase(.member(membership), of: id)
                scheduleTick(for: id)
                enqueue(.renewed(.init(expiresAt: expiresAt)), to: id, into: &actions)
                tokenNotice(id, now: now, into: &actions)
            }
        default:
            break
        }
    }

    /// A claim of `channel` came back: the connection joins here, or is sent to the node where the channel's members
    /// meet.
    private mutating func homeFound(
        _ id: SessionID, channel: String, _ home: ChannelHome, now: Int64, into actions: inout [ChannelAction]
    ) {
        claims[channel, default: 1] -= 1
        if claims[channel] == 0 { claims[channel] = nil }
        if case .claiming(let join, let expiresAt) = connections[id]?.phase {
            switch home {
            case .here, .unknown:
                admit(id, join, expiresAt: expiresAt, now: now, into: &actions)
            case .elsewhere(let node, let url):
                let whereTo = url.map { "; join at \($0)" } ?? "; connect to that node (or through the cluster's proxy)"
                failJoin(
                    id, .channelElsewhere, "channel \(channel) meets on node \(node)\(whereTo)", location: url,
                    into: &actions)
            }
        }
        // A claim this node holds and no longer needs (its connection went, or was refused by the channel).
        if home == .here { releaseIfUnused(channel, into: &actions) }
    }

    /// Gives up this node's claim of `channel` once it has no member here and no claim in flight.
    private func releaseIfUnused(_ channel: String, into actions: inout [ChannelAction]) {
        guard topology == .cluster, rooms[channel] == nil, claims[channel] == nil else { return }
        actions.append(.releaseHome(channel: channel))
    }

    /// Makes a connection whose token was accepted a member, if the channel lets it in.
    private mutating func admit(
        _ id: SessionID, _ join: ChannelClientFrame.Join, expiresAt: Int64, now: Int64,
        into actions: inout [ChannelAction]
    ) {
        if isShuttingDown {
            return failJoin(id, .serverShutdown, "the server is shutting down; join again in a moment", into: &actions)
        }
        if let until = bars[BarKey(channel: join.channel, uid: join.uid)], until > now {
            let seconds = (until - now + 999) / 1000
            return failJoin(
                id, .barred,
                "uid \(join.uid) was removed from channel \(join.channel) and may rejoin in \(seconds) more seconds",
                into: &actions)
        }
        let member = join.member
        let room = rooms[join.channel] ?? Room()
        let previous = room.members[member]
        let uids = room.members.uids
        guard uids.contains(join.uid) || uids.count < limits.capacity else {
            return failJoin(
                id, .channelFull,
                "channel \(join.channel) already has \(uids.count) users, the most this server allows", into: &actions)
        }
        let devices = room.members.members(of: join.uid).count - (previous == nil ? 0 : 1)
        guard devices < limits.devicesPerUser else {
            return failJoin(
                id, .channelFull,
                "uid \(join.uid) is already in channel \(join.channel) on \(devices) devices, "
                    + "the most this server allows", into: &actions)
        }
        if let previous {
            remove(previous, .replaced, now: now, into: &actions)
        }
        var current = rooms[join.channel] ?? Room()
        // In join order (docs/protocol.md): a callee tells the caller's previous peer from its next one by it.
        let existing = current.members.members
        let existingSessions = current.members.sessions
        current.members[member] = id
        if current.members.userCount >= 2 {
            current.hadTwo = true
            current.aloneSince = nil
        }
        rooms[join.channel] = current
        connections.setPhase(
            .member(Membership(channel: join.channel, member: member, lease: TokenLease(expiresAt: expiresAt))), of: id)
        scheduleTick(for: id)
        enqueue(
            .joined(
                .init(
                    channel: join.channel, uid: join.uid, devices: existing, expiresAt: expiresAt,
                    iceServers: ice.servers(for: join.uid, now: now))), to: id,
            into: &actions)
        for other in existingSessions {
            enqueue(.memberJoined(member), to: other, into: &actions)
        }
        actions.append(
            .report(
                .init(
                    event: .userJoined, channel: join.channel, uid: join.uid, device: join.device, reason: .joined,
                    time: now)))
        tokenNotice(id, now: now, into: &actions)
    }

    private mutating func tokenNotice(_ id: SessionID, now: Int64, into actions: inout [ChannelAction]) {
        guard case .member(var membership) = connections[id]?.phase,
            membership.lease.due(now: now, noticeMillis: limits.tokenNoticeMillis) == .notice
        else { return }
        connections.setPhase(.member(membership), of: id)
        enqueue(.tokenWillExpire(.init(expiresAt: membership.lease.expiresAt)), to: id, into: &actions)
    }

    // MARK: - Relay

    private mutating func relay(
        _ signal: ChannelClientFrame.Signal, from id: SessionID, _ membership: Membership,
        into actions: inout [ChannelAction]
    ) {
        func fail(_ message: String) {
            enqueue(
                .signalFailed(.init(to: signal.to, device: signal.device, message: message)), to: id, into: &actions)
        }
        guard signal.to != membership.uid else { return fail("a member cannot signal its own uid") }
        let room = rooms[membership.channel] ?? Room()
        let target: SessionID
        if let device = signal.device {
            guard let session = room.members[ChannelMember(uid: signal.to, device: device)] else {
                return fail("uid \(signal.to) is not in channel \(membership.channel) on device \(device)")
            }
            target = session
        } else {
            // Without a device, the uid's only member: a member that knows no devices talks to a user on one.
            let sessions = room.members.sessions(of: signal.to)
            guard let session = sessions.first else {
                return fail("uid \(signal.to) is not in channel \(membership.channel)")
            }
            guard sessions.count == 1 else {
                let devices = room.members.members(of: signal.to).map { $0.device ?? "(none)" }
                return fail(
                    "uid \(signal.to) is in channel \(membership.channel) on \(sessions.count) devices "
                        + "(\(devices.joined(separator: ", "))); name one in \"device\"")
            }
            target = session
        }
        enqueue(
            .signal(.init(from: membership.uid, device: membership.member.device, data: signal.data)), to: target,
            into: &actions)
    }

    // MARK: - Leaving

    /// Refuses a join: `joinFailed`, then close. The connection is forgotten at once, so the frame is not counted
    /// against its outbox.
    private mutating func failJoin(
        _ id: SessionID, _ code: ChannelErrorCode, _ message: String, location: String? = nil,
        into actions: inout [ChannelAction]
    ) {
        guard connections.close(id) != nil else { return }
        actions.append(.send(id, .joinFailed(.init(code: code, message: message, location: location))))
        actions.append(.close(id, code: code.closeCode))
    }

    /// Removes a member: tells it why (unless it left or its socket is gone; uncounted, as it is forgotten at
    /// once), tells the others, reports it.
    private mutating func remove(_ id: SessionID, _ cause: Cause, now: Int64, into actions: inout [ChannelAction]) {
        guard let connection = connections.close(id) else { return }
        guard case .member(let membership) = connection.phase else { return }
        let leaveReason: ChannelLeaveReason
        let noticeReason: ChannelNotice.Reason
        var removal: (ChannelErrorCode, String)?
        switch cause {
        case .quit:
            leaveReason = .quit
            noticeReason = .quit
            actions.append(.close(id, code: 1000))
        case .lost:
            leaveReason = .dropped
            noticeReason = .dropped
        case .kicked(let message):
            leaveReason = .removed
            noticeReason = .kicked
            removal = (.kicked, message)
        case .tokenExpired:
            leaveReason = .removed
            noticeReason = .tokenExpired
            removal = (.tokenExpired, "the token expired; join again with a new token")
        case .replaced:
            leaveReason = .removed
            noticeReason = .replaced
            removal = (.replaced, "uid \(membership.member) joined channel \(membership.channel) again elsewhere")
        case .watchdog:
            leaveReason = .removed
            noticeReason = .watchdog
            let seconds = (limits.watchdogMillis ?? 0) / 1000
            removal = (.watchdog, "alone in channel \(membership.channel) for more than \(seconds) s after the call")
        case .shutdown:
            leaveReason = .removed
            noticeReason = .shutdown
            removal = (.serverShutdown, "the server is shutting down; join again in a moment")
        case .slowConsumer:
            // No `removed` frame: it would wait behind the backlog. The close code says it.
            leaveReason = .dropped
            noticeReason = .slowConsumer
            actions.append(.close(id, code: ChannelErrorCode.slowConsumer.closeCode))
        case .flooding(let message):
            leaveReason = .removed
            noticeReason = .kicked
            removal = (.rateLimited, message)
        }
        if let removal {
            actions.append(.send(id, .removed(.init(code: removal.0, message: removal.1))))
            actions.append(.close(id, code: removal.0.closeCode))
        }
        if var room = rooms[membership.channel], room.members[membership.member] == id {
            room.members[membership.member] = nil
            if room.members.isEmpty {
                rooms[membership.channel] = nil
                releaseIfUnused(membership.channel, into: &actions)
            } else {
                if room.members.userCount == 1, room.hadTwo, room.aloneSince == nil {
                    room.aloneSince = now
                }
                rooms[membership.channel] = room
            }
            if cause != .shutdown {
                let left = ChannelServerFrame.MemberLeft(
                    uid: membership.uid, device: membership.member.device, reason: leaveReason)
                for other in room.members.sessions {
                    enqueue(.memberLeft(left), to: other, into: &actions)
                }
            }
        }
        actions.append(
            .report(
                .init(
                    event: .userLeft, channel: membership.channel, uid: membership.uid,
                    device: membership.member.device, reason: noticeReason, time: now)
            ))
    }

    /// The operator kicks `uid` out of `channel` at `now` and bars it for `barSeconds` (0: no bar), appending what
    /// to do to `actions`. Returns whether `uid` was in the channel and until when it is barred: the operator's
    /// answer, which is not an action.
    package mutating func kick(
        channel: String, uid: UInt, barSeconds: Int, reason: String?, now: Int64, into actions: inout [ChannelAction]
    ) -> (kicked: Bool, barredUntil: Int64?) {
        let barredUntil: Int64? = barSeconds > 0 ? now + Int64(barSeconds) * 1000 : nil
        bars[BarKey(channel: channel, uid: uid)] = barredUntil
        revoke(BarKey(channel: channel, uid: uid), at: now)
        // Every device of the uid: a kick removes a user.
        let sessions = rooms[channel]?.members.sessions(of: uid) ?? []
        guard !sessions.isEmpty else { return (false, barredUntil) }
        var message = "removed from channel \(channel) by the operator"
        if let reason, !reason.isEmpty { message += ": \(reason)" }
        if barSeconds > 0 { message += " (may rejoin in \(barSeconds) s)" }
        for id in sessions { remove(id, .kicked(message), now: now, into: &actions) }
        // As after an event: a member the removal notice overflowed is closed last.
        while let slow = connections.nextSlowConsumer() { dropSlowConsumer(slow, now: now, into: &actions) }
        return (true, barredUntil)
    }

    // MARK: - Outboxes

    /// Queues `frame` for connection `id`: counts it against the connection's outbox and appends the `send`. A
    /// frame that does not fit is not sent: the connection is noted as a slow consumer (it takes no more frames)
    /// and closed when the event's other steps are done (``OutboxAccounting/nextSlowConsumer()``). A frame for a
    /// connection the state does not know is appended uncounted; the shell has no socket for it.
    mutating func enqueue(_ frame: ChannelServerFrame, to id: SessionID, into actions: inout [ChannelAction]) {
        guard let index = connections.index(forKey: id) else {
            actions.append(.send(id, frame))
            return
        }
        let relayedSignal = relayed(frame, to: id)
        if connections.enqueue(id, at: index, cost: FrameCost.bytes(of: frame), relayed: relayedSignal) {
            actions.append(.send(id, frame))
        }
    }

    /// The sender of a relayed signal: the member of the target's channel the signal is stamped with.
    private func relayed(_ frame: ChannelServerFrame, to id: SessionID) -> RelayedSignal? {
        guard case .signal(let signal) = frame, let target = member(id),
            let sender = rooms[target.channel]?.members[signal.sender]
        else { return nil }
        return RelayedSignal(sender: sender)
    }

    /// Closes a connection that does not read its socket; the senders of signals it never got get `signalFailed`.
    private mutating func dropSlowConsumer(_ id: SessionID, now: Int64, into actions: inout [ChannelAction]) {
        guard let connection = connections[id] else { return }
        guard case .member(let membership) = connection.phase else {
            connections.close(id)
            actions.append(.close(id, code: ChannelErrorCode.slowConsumer.closeCode))
            return
        }
        remove(id, .slowConsumer, now: now, into: &actions)
        for signal in connection.outbox.unwritten where connections[signal.sender] != nil {
            enqueue(
                .signalFailed(
                    .init(
                        to: membership.uid,
                        message: "uid \(membership.uid) was disconnected as a slow consumer before it got this")),
                to: signal.sender, into: &actions)
        }
    }

    // MARK: - Time

    /// Schedules the tick for `id`'s next deadline: the join timeout until it is a member, then its token's notice
    /// and expiry. Called wherever one may move earlier (a join, a renewal).
    private mutating func scheduleTick(for id: SessionID) {
        guard let connection = connections[id] else { return }
        switch connection.phase {
        case .awaitingJoin, .verifying, .claiming:
            connections.schedule(id, at: SessionDeadlines.time(limits.joinTimeoutMillis, after: connection.connectedAt))
        case .member(let membership):
            connections.schedule(id, at: membership.lease.nextDue(noticeMillis: limits.tokenNoticeMillis))
        }
    }

    private mutating func tick(now: Int64, into actions: inout [ChannelAction]) {
        // Only the connections with a deadline due, in id order, as a visit of every connection would act on them.
        for id in connections.takeDue(now: now) {
            guard let connection = connections[id] else { continue }
            switch connection.phase {
            case .awaitingJoin, .verifying, .claiming:
                if now - connection.connectedAt >= limits.joinTimeoutMillis {
                    failJoin(
                        id, .joinTimeout, "no join within \(limits.joinTimeoutMillis / 1000) s of connecting",
                        into: &actions)
                    continue
                }
            case .member(let membership):
                if membership.lease.isExpired(at: now) {
                    remove(id, .tokenExpired, now: now, into: &actions)
                    continue
                }
                tokenNotice(id, now: now, into: &actions)
            }
            scheduleTick(for: id)
        }
        if let limit = limits.watchdogMillis {
            for channel in rooms.keys.sorted() {
                guard let room = rooms[channel], let since = room.aloneSince, now - since >= limit else { continue }
                // The user left alone, on every device it is on.
                for id in room.members.sessions { remove(id, .watchdog, now: now, into: &actions) }
            }
        }
        bars = bars.filter { $0.value > now }
        if now >= nextRevocationPrune {
            nextRevocationPrune = now + 60_000
            let keep = Int64(TokenLifetime.maxSeconds) * 1000
            revocations = revocations.filter { now - $0.value < keep }
        }
    }

    /// Refuses `key`'s tokens issued until `now`, forgetting the oldest revocation when there are too many.
    private mutating func revoke(_ key: BarKey, at now: Int64) {
        if revocations[key] == nil, revocations.count >= limits.maxRevocations,
            let oldest = revocations.min(by: { $0.value < $1.value })?.key
        {
            revocations[oldest] = nil
        }
        revocations[key] = now
    }
}
